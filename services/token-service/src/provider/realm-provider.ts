import type { IncomingMessage } from 'node:http';
import { forwardedTrust, isDatabaseUnavailable, type Logger } from '@plant/shared';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { ClientAuthentication, ClientAuthSource, ClientCredential } from '../domain/authenticate-client.js';
import { TooManyFailedAuthentications } from '../domain/errors.js';
import { issuerOf, PORTAL_CLIENT_ID, realmPath } from '../domain/realm-naming.js';
import { grantRequestId } from './grant-request-id.js';
import { PRINCIPAL_METADATA, realmConfiguration, ROLE_SCOPES, type PrincipalMetadata, type RealmConfigurationDeps } from './realm-configuration.js';
import type { Rs256SigningKey } from './rs256-signing-key.js';
import type { TokenMetrics } from './token-metrics.js';

export interface RealmProviderDeps extends RealmConfigurationDeps {
  logger: Logger;
  metrics: TokenMetrics;
}

/**
 * The realm a provider acts for, read when needed: fixed for a realm's own provider, the
 * request's realm for the grant engine (grant-engine.ts), which serves every realm's token endpoint.
 */
export interface RealmBinding {
  /**
   * Of the request `ctx`, or without it of the request oidc-provider is handling (`Provider.ctx`:
   * set inside its handling, not in our guard around it).
   */
  realm(ctx?: { req: IncomingMessage }): string;
  issuer(ctx: { req: IncomingMessage }): string;
}

type ProviderContext = Parameters<Parameters<Provider['use']>[0]>[0];
type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

const TOKEN_PATH = '/protocol/openid-connect/token';
const GRANT_NOT_ALLOWED = 'requested grant type is not allowed for this client';
const ABSENT_CLIENT_AUTH = new Set(['no client authentication mechanism provided', 'client_secret must be provided in the Authorization header']);
const UNKNOWN_SOURCE: ClientAuthSource = Object.freeze({ ip: 'unknown' });

/** 429 in the token endpoint's own error format. */
class TooManyRequests extends errors.OIDCProviderError {
  constructor(description: string) {
    super(429, 'too_many_requests');
    this.error_description = description;
  }
}

function oauthError(ctx: ProviderContext, status: number, error: string, description: string): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error, error_description: description };
}

/** A domain refusal as oidc-provider must see it inside its token endpoint (with Retry-After); anything else unchanged. */
function asOidcError(ctx: ProviderContext | undefined, err: unknown): unknown {
  if (!(err instanceof TooManyFailedAuthentications)) return err;
  ctx?.set('Retry-After', String(err.retryAfterSeconds));
  return new TooManyRequests(err.message);
}

/**
 * A service account as an oidc-provider client. `client_secret` holds the HMAC digest, never
 * the secret: `compareClientSecret` is replaced to compare digests, and no feature that would
 * use the secret as a key (client_secret_jwt, HS* algorithms) is enabled.
 */
function serviceAccountClientMetadata(credential: ClientCredential): Record<string, unknown> {
  const principal: PrincipalMetadata = { type: 'service_account', role: credential.role, grants: credential.grants, version: credential.token_version };
  return {
    client_id: credential.sub,
    client_secret: credential.secret_digest,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: ROLE_SCOPES[credential.role],
    [PRINCIPAL_METADATA]: principal,
  };
}

/**
 * Service accounts as clients, looked up once through the domain. oidc-provider would build a
 * client from adapter metadata on every lookup (hashing the whole metadata to find it in a
 * 100-entry LRU); the credential object stays the same until the account changes, so the
 * built client is kept per credential: no hashing per grant, a changed account gets a new
 * client, and any number of active accounts stay built.
 */
function serveServiceAccountClients(provider: Provider, binding: RealmBinding, clientAuth: ClientAuthentication, credentialOf: WeakMap<object, ClientCredential>): void {
  const clients = provider.Client as unknown as { new (metadata: Record<string, unknown>): Client; find(id: unknown): Promise<Client | undefined> };
  const findStatic = clients.find.bind(clients);
  const byCredential = new WeakMap<ClientCredential, Client>();
  clients.find = async function findClient(id: unknown): Promise<Client | undefined> {
    if (typeof id !== 'string' || id.length === 0 || id === PORTAL_CLIENT_ID) return findStatic(id);
    const ctx = Provider.ctx;
    const source = ctx ?? UNKNOWN_SOURCE;
    const tenant = binding.realm();
    // A fresh cached credential is read without an await: this runs once per grant.
    const hit = clientAuth.cachedCredential(tenant, id, source);
    const credential = hit !== undefined ? hit.row : await clientAuth.findCredential(tenant, id, source).catch((err: unknown) => Promise.reject(asOidcError(ctx, err)));
    if (credential === undefined) return undefined;
    let client = byCredential.get(credential);
    if (client === undefined) {
      client = new clients(serviceAccountClientMetadata(credential));
      byCredential.set(credential, client);
      credentialOf.set(client, credential);
    }
    return client;
  };

  provider.Client.prototype.compareClientSecret = function compareClientSecret(this: { clientId: string; clientSecret: string }, presented: string) {
    const ctx = Provider.ctx;
    const verdict = clientAuth.verifySecret(binding.realm(), this.clientId, this.clientSecret, presented, ctx ?? UNKNOWN_SOURCE);
    return typeof verdict === 'boolean' ? verdict : verdict.catch((err: unknown) => Promise.reject(asOidcError(ctx, err)));
  };
}

/**
 * RFC 6749 §5.2 codes where oidc-provider answers invalid_request: a grant type the client
 * may not use is unauthorized_client; no client authentication at all is invalid_client (401).
 */
function rewriteTokenErrors(ctx: ProviderContext, issuer: RealmBinding['issuer']): void {
  const body = ctx.body as { error?: string; error_description?: string } | undefined;
  if (ctx.status !== 400 || body?.error !== 'invalid_request') return;
  if (body.error_description === GRANT_NOT_ALLOWED) {
    body.error = 'unauthorized_client';
    return;
  }
  if (!ABSENT_CLIENT_AUTH.has(body.error_description ?? '')) return;
  ctx.set('WWW-Authenticate', `Basic realm="${issuer(ctx)}"`);
  oauthError(ctx, 401, 'invalid_client', 'client authentication is required');
}

/**
 * A grant whose client's credential changed after its secret was compared (a reset or a change
 * of role or grants committed meanwhile) is withdrawn. The check runs after the token is minted
 * and in the same turn of the event loop as the response would be written, so once this replica
 * has heard a change (before the change's own answer), no token for the old credential leaves
 * it. Undefined, without a promise, while the credential is current: the hot path waits on
 * nothing here. Otherwise the token is dropped at once, then the answer says what changed: 401
 * invalid_client when the secret no longer authenticates (reset, deleted), 503 with Retry-After
 * when it still does (role or grants changed: the next grant gets the new claims). The token
 * was minted, so it counts as issued and as refused.
 */
function withdrawStaleGrant(ctx: ProviderContext, issuer: RealmBinding['issuer'], clientAuth: ClientAuthentication, credentialOf: WeakMap<object, ClientCredential>, metrics: TokenMetrics): Promise<void> | undefined {
  const { oidc } = ctx as unknown as KoaContextWithOIDC;
  const credential = oidc?.client === undefined ? undefined : credentialOf.get(oidc.client);
  if (credential === undefined || clientAuth.isCurrent(credential)) return undefined;
  oauthError(ctx, 401, 'invalid_client', 'client authentication failed');
  const grantType = oidc.params?.grant_type;
  const retry = () => {
    ctx.set('Retry-After', '1');
    oauthError(ctx, 503, 'temporarily_unavailable', 'the client changed while its token was issued; retry');
    metrics.failed(grantType, 'temporarily_unavailable');
  };
  return clientAuth.secretUnchanged(credential).then(
    (unchanged) => {
      if (unchanged) return retry();
      if (ctx.headers.authorization !== undefined) ctx.set('WWW-Authenticate', `Basic realm="${issuer(ctx)}", error="invalid_client", error_description="client authentication failed"`);
      metrics.failed(grantType, 'invalid_client');
    },
    retry,
  );
}

/**
 * Wraps every request of a realm's provider: the token endpoint is POST only, a grant whose
 * credential changed meanwhile is withdrawn, its errors are made RFC 6749 exact, a database
 * outage is 503 (not 500), and an unknown path is a 404 in the Error shape.
 */
function guardRealmRequests(issuer: RealmBinding['issuer'], clientAuth: ClientAuthentication, credentialOf: WeakMap<object, ClientCredential>, metrics: TokenMetrics) {
  return async function guardRealmRequest(ctx: ProviderContext, next: () => Promise<unknown>): Promise<void> {
    const isToken = ctx.path === TOKEN_PATH;
    if (isToken && ctx.method !== 'POST' && ctx.method !== 'OPTIONS') {
      ctx.set('Allow', 'POST');
      oauthError(ctx, 405, 'invalid_request', 'the token endpoint accepts POST requests only');
      return;
    }
    await next();
    const withdrawn = isToken && ctx.status === 200 ? withdrawStaleGrant(ctx, issuer, clientAuth, credentialOf, metrics) : undefined;
    if (withdrawn !== undefined) await withdrawn;
    if (ctx.status === 500 && ctx.state.dependencyUnavailable) {
      // The database, not the request, failed: tell the client to retry rather than blame it.
      ctx.set('Retry-After', '1');
      oauthError(ctx, 503, 'temporarily_unavailable', 'the service is temporarily unavailable; retry shortly');
    }
    if (isToken) rewriteTokenErrors(ctx, issuer);
    if (ctx.status === 404 && ctx.body === undefined) {
      ctx.status = 404;
      ctx.body = { error: 404, message: 'Not found' };
    }
  };
}

/**
 * A realm's oidc-provider (configured by realm-configuration.ts), for its browser endpoints:
 * discovery, authorization and sign-in, userinfo, logout, its keys.
 */
export function createRealmProvider(tenant: string, signingKey: Rs256SigningKey, deps: RealmProviderDeps): Provider {
  const issuer = issuerOf(deps.config.AUTH_URL, tenant);
  const binding: RealmBinding = { realm: () => tenant, issuer: () => issuer };
  return wireProvider(new Provider(issuer, realmConfiguration({ ...binding, cookiePath: realmPath(tenant) }, signingKey, deps)), binding, deps);
}

/**
 * Where our code runs inside a provider's requests: the guard in front of every request,
 * service accounts as clients, the secret comparison (the domain's, on digests), and its events
 * (metrics, failures of unknown clients, server errors).
 */
export function wireProvider(provider: Provider, binding: RealmBinding, deps: RealmProviderDeps): Provider {
  const { config, clientAuth, logger, metrics } = deps;
  // Read by the page renderers for their Content-Security-Policy.
  Object.defineProperty(provider, 'portalOrigin', { value: new URL(config.PORTAL_URL).origin });
  // The public listener has already reduced X-Forwarded-* to what trusted hops vouch for.
  const { proxy, maxIpsCount } = forwardedTrust(config.TRUST_PROXY).koa;
  provider.proxy = proxy;
  provider.maxIpsCount = maxIpsCount;

  // The credential each service-account client was built from, to tell when it changed.
  const credentialOf = new WeakMap<object, ClientCredential>();
  serveServiceAccountClients(provider, binding, clientAuth, credentialOf);
  provider.use(guardRealmRequests(binding.issuer, clientAuth, credentialOf, metrics));

  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    metrics.issued(ctx.oidc.params?.grant_type);
  });
  provider.on('grant.error', (ctx: KoaContextWithOIDC, err: { error?: string; message?: string }) => {
    if (err.error === 'invalid_client' && !ctx.oidc.client) clientAuth.recordUnknownClient(ctx);
    metrics.failed(ctx.oidc.params?.grant_type, err.error);
  });
  provider.on('server_error', (ctx: KoaContextWithOIDC, err: Error) => {
    const { reqId } = grantRequestId(ctx);
    const tenant = binding.realm(ctx);
    if (isDatabaseUnavailable(err)) {
      ctx.state.dependencyUnavailable = true;
      logger.warn({ reqId, err: { message: err.message }, tenant }, 'dependency unavailable');
    } else logger.error({ reqId, err, tenant }, 'oidc-provider server error');
  });

  return provider;
}
