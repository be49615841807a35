import type { SigningAlgorithm } from '@plant/shared/api';
import { isDatabaseUnavailable } from '@plant/shared/db';
import { forwardedTrust } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import type { SourceBudget } from '@plant/shared/security';
import type { Principal } from '@plant/resource-auth';
import type { IncomingMessage } from 'node:http';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';
import {
  type ClientAuthentication,
  type ClientCredential,
  ASYMMETRIC_ALGS,
} from '../client-auth/index.js';
import { guardAuthorizationRequests } from './authorization-request-guard.js';
import { INTROSPECTION_PATH, issuerOf, realmPath } from '../realms/index.js';
import { grantRequestId } from './grant-request-id.js';
import { guardDeviceFlow, type DeviceFlowBudgets } from './device-flow.js';
import { pinRequestOrigin, type ProviderContext } from './oidc-provider-internals.js';
import type { RealmPageContext } from './provider-pages.js';
import { realmConfiguration, type RealmConfigurationDeps } from './realm-configuration.js';
import { claimReplaysInStore } from './replay-detection.js';
import {
  AssertionRefused,
  AssertionUnverifiable,
  ReplayCheckUnavailable,
} from '../platform/index.js';
import { exchangeAudiencesOf } from '../config.js';
import { registerTokenExchange } from './token-exchange-grant.js';
import { workloadSubject } from './workload-subject.js';
import type { NodeSigningKey } from '../signing-keys/index.js';

/** Counts the token endpoint's outcomes by grant type (grants/token-metrics.ts). */
export interface GrantOutcomes {
  issued(grantType: unknown): void;
  /** `error`: the OAuth error code. */
  failed(grantType: unknown, error: string | undefined): void;
}

/**
 * Serves service accounts as a provider's clients (grants/service-account-clients.ts): replaces
 * its client lookup and secret comparison, and fills `credentialOf` with the credential each
 * client was built from.
 */
export type ServeClients = (
  provider: Provider,
  deps: {
    binding: RealmBinding;
    clientAuth: ClientAuthentication;
    credentialOf: WeakMap<object, ClientCredential>;
  },
) => void;

/**
 * What a realm's provider is built with. The parts of the wings above oidc (grants' clients and
 * metrics, the token inspector, sign-in's rules) are ports named here and handed in by the
 * composition root, so oidc imports none of those wings.
 */
export interface RealmProviderDeps extends RealmConfigurationDeps {
  /** Verifies subject and actor tokens of a token exchange as a resource server would (token-inspector.ts). */
  tokenInspector: { inspect(token: string): Promise<Principal> };
  logger: Logger;
  metrics: GrantOutcomes;
  serveClients: ServeClients;
  /** Sign-ins started at the authorization endpoint, per source and in total (authorization-request-guard.ts). */
  signInStarts: SourceBudget;
  /** Device codes started and user codes entered, per source and in total (device-flow.ts). */
  deviceFlow: DeviceFlowBudgets;
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

const TOKEN_PATH = '/protocol/openid-connect/token';
const DISCOVERY_PATH = '/.well-known/openid-configuration';
const GRANT_NOT_ALLOWED = 'requested grant type is not allowed for this client';
const ABSENT_CLIENT_AUTH = new Set([
  'no client authentication mechanism provided',
  'client_secret must be provided in the Authorization header',
]);

function oauthError(
  ctx: ProviderContext,
  status: number,
  error: string,
  description: string,
): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error, error_description: description };
}

/**
 * Discovery names what the token endpoint accepts. Client assertions are checked by our domain
 * (service-account-clients.ts), not by oidc-provider, which is configured without them; so its
 * document would leave `private_key_jwt` out. Introspection is our own route
 * (introspection-route.ts), not oidc-provider's, which cannot introspect JWT access tokens.
 */
function advertiseOwnEndpoints(ctx: ProviderContext, issuer: string): void {
  const body = ctx.body as Record<string, unknown> | undefined;
  if (ctx.status !== 200 || body === undefined) return;
  body.introspection_endpoint = `${issuer}${INTROSPECTION_PATH}`;
  const methods = (body.token_endpoint_auth_methods_supported as string[] | undefined) ?? [];
  body.token_endpoint_auth_methods_supported = [
    ...methods.filter((m) => m !== 'none'),
    'private_key_jwt',
    ...(methods.includes('none') ? ['none'] : []),
  ];
  body.token_endpoint_auth_signing_alg_values_supported = [...ASYMMETRIC_ALGS];
}

/**
 * RFC 6749 §5.2 codes where oidc-provider answers invalid_request: a grant type the client
 * may not use is unauthorized_client; no client authentication at all is invalid_client (401).
 * A client that requires DPoP and sent no proof learns so (RFC 9449's invalid_dpop_proof).
 */
function rewriteTokenErrors(ctx: ProviderContext, issuer: RealmBinding['issuer']): void {
  const body = ctx.body as { error?: string; error_description?: string } | undefined;
  // oidc-provider says only "grant request is invalid" when a client that requires DPoP sends no proof.
  if (
    ctx.status === 400 &&
    body?.error === 'invalid_grant' &&
    ctx.headers.dpop === undefined &&
    (ctx as unknown as KoaContextWithOIDC).oidc?.client?.dpopBoundAccessTokens === true
  ) {
    oauthError(
      ctx,
      400,
      'invalid_dpop_proof',
      'this client requires a DPoP proof (RFC 9449) with every token request',
    );
    return;
  }
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
 * nothing here. Otherwise the token is held back, then the answer says what changed: 401
 * invalid_client when the credential no longer authenticates (reset, removed key or trust,
 * disabled, deleted), 503 with Retry-After when it still does but the claims changed (role or
 * grants: the next grant gets the new ones), and the token itself when nothing was revoked (a
 * key or trust added meanwhile, or the credential was only distrusted: the replica re-subscribed
 * to the change events, as after a Redis failover, and dropped every cached credential). A token held back was minted, so it counts as issued and as refused.
 */
function withdrawStaleGrant(
  ctx: ProviderContext,
  issuer: RealmBinding['issuer'],
  clientAuth: ClientAuthentication,
  credentialOf: WeakMap<object, ClientCredential>,
  metrics: GrantOutcomes,
): Promise<void> | undefined {
  const { oidc } = ctx as unknown as KoaContextWithOIDC;
  const credential = oidc?.client === undefined ? undefined : credentialOf.get(oidc.client);
  if (credential === undefined || clientAuth.isCurrent(credential)) return undefined;
  const minted = { status: ctx.status, body: ctx.body };
  oauthError(ctx, 401, 'invalid_client', 'client authentication failed');
  const grantType = oidc.params?.grant_type;
  const retry = () => {
    ctx.set('Retry-After', '1');
    oauthError(
      ctx,
      503,
      'temporarily_unavailable',
      'the client changed while its token was issued; retry',
    );
    metrics.failed(grantType, 'temporarily_unavailable');
  };
  return clientAuth.staleGrantVerdict(credential, ctx).then((verdict) => {
    if (verdict === 'issue') {
      ctx.status = minted.status;
      ctx.body = minted.body;
      return;
    }
    if (verdict === 'retry') return retry();
    if (ctx.headers.authorization !== undefined)
      ctx.set(
        'WWW-Authenticate',
        `Basic realm="${issuer(ctx)}", error="invalid_client", error_description="client authentication failed"`,
      );
    metrics.failed(grantType, 'invalid_client');
  }, retry);
}

/**
 * Wraps every request of a realm's provider: the token endpoint is POST only, a grant whose
 * credential changed meanwhile is withdrawn, its errors are made RFC 6749 exact, a database
 * outage is 503 (not 500), and an unknown path is a 404 in the Error shape.
 */
function guardRealmRequests(
  issuer: RealmBinding['issuer'],
  clientAuth: ClientAuthentication,
  credentialOf: WeakMap<object, ClientCredential>,
  metrics: GrantOutcomes,
) {
  return async function guardRealmRequest(
    ctx: ProviderContext,
    next: () => Promise<unknown>,
  ): Promise<void> {
    const isToken = ctx.path === TOKEN_PATH;
    if (isToken && ctx.method !== 'POST' && ctx.method !== 'OPTIONS') {
      ctx.set('Allow', 'POST');
      oauthError(ctx, 405, 'invalid_request', 'the token endpoint accepts POST requests only');
      return;
    }
    await next();
    const withdrawn =
      isToken && ctx.status === 200
        ? withdrawStaleGrant(ctx, issuer, clientAuth, credentialOf, metrics)
        : undefined;
    if (withdrawn !== undefined) await withdrawn;
    if (ctx.status >= 500 && ctx.state.dependencyUnavailable) {
      // The database, not the request, failed: tell the client to retry rather than blame it.
      ctx.set('Retry-After', '1');
      oauthError(
        ctx,
        503,
        'temporarily_unavailable',
        'the service is temporarily unavailable; retry shortly',
      );
    }
    if (isToken) rewriteTokenErrors(ctx, issuer);
    if (ctx.path === DISCOVERY_PATH) advertiseOwnEndpoints(ctx, issuer(ctx));
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
export function createRealmProvider(
  tenant: string,
  signingKey: NodeSigningKey,
  deps: RealmProviderDeps,
): Provider {
  const issuer = issuerOf(deps.config.AUTH_URL, tenant);
  const binding: RealmBinding = { realm: () => tenant, issuer: () => issuer };
  // One key, one algorithm: discovery's id_token_signing_alg_values_supported (derived from the keys) names it alone.
  const signing = {
    ...binding,
    algorithm: () => signingKey.algorithm,
    cookiePath: realmPath(tenant),
  };
  const provider = new Provider(issuer, realmConfiguration(signing, [signingKey], deps));
  // The grant engine serves the token endpoint; registered here too, so discovery names the grant.
  exchangeGrant(provider, { realm: () => tenant, algorithm: () => signingKey.algorithm }, deps);
  // Read by the page renderers (provider-pages.ts): the tenant in the header, the way back to the portal, the CSP.
  const pageContext: RealmPageContext = { tenant, portalUrl: deps.config.PORTAL_URL };
  Object.defineProperty(provider, 'pageContext', { value: pageContext });
  wireProvider(provider, binding, deps);
  // Inside the realm guard (its 503 for an outage wraps it), before oidc-provider reads anything;
  // here rather than in wireProvider: the grant engine never serves the authorization endpoint.
  provider.use(guardAuthorizationRequests({ budget: deps.signInStarts, pageContext }));
  provider.use(guardDeviceFlow(deps.deviceFlow, tenant));
  return provider;
}

/**
 * Where our code runs inside a provider's requests: the guard in front of every request,
 * service accounts as clients, the secret comparison (the domain's, on digests), and its events
 * (metrics, failures of unknown clients, server errors).
 */
export function wireProvider(
  provider: Provider,
  binding: RealmBinding,
  deps: RealmProviderDeps,
): Provider {
  const { config, clientAuth, logger, metrics } = deps;
  // The public listener has already reduced X-Forwarded-* to what trusted hops vouch for.
  const { proxy, maxIpsCount } = forwardedTrust(config.TRUST_PROXY).koa;
  provider.proxy = proxy;
  provider.maxIpsCount = maxIpsCount;

  // The credential each service-account client was built from, to tell when it changed.
  const credentialOf = new WeakMap<object, ClientCredential>();
  deps.serveClients(provider, { binding, clientAuth, credentialOf });
  claimReplaysInStore(provider, deps.replay);
  provider.use(pinRequestOrigin(new URL(config.AUTH_URL).origin));
  provider.use(guardRealmRequests(binding.issuer, clientAuth, credentialOf, metrics));

  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    metrics.issued(ctx.oidc.params?.grant_type);
  });
  provider.on(
    'grant.error',
    (ctx: KoaContextWithOIDC, err: { error?: string; message?: string }) => {
      // A refused assertion was counted by the domain already; any other invalid_client without a client is an unknown one.
      if (err.error === 'invalid_client' && !ctx.oidc.client && !(err instanceof AssertionRefused))
        clientAuth.recordUnknownClient(ctx);
      metrics.failed(ctx.oidc.params?.grant_type, err.error);
    },
  );
  provider.on('server_error', (ctx: KoaContextWithOIDC, err: Error) => {
    const { reqId } = grantRequestId(ctx);
    const tenant = binding.realm(ctx);
    // The database, or the jti store an assertion needs: the client is told to retry (the guard answers 503).
    if (
      isDatabaseUnavailable(err) ||
      err instanceof AssertionUnverifiable ||
      err instanceof ReplayCheckUnavailable
    ) {
      ctx.state.dependencyUnavailable = true;
      logger.warn({ reqId, err: { message: err.message }, tenant }, 'dependency unavailable');
    } else logger.error({ reqId, err, tenant }, 'oidc-provider server error');
  });

  return provider;
}

/** Registers the token-exchange grant (token-exchange-grant.ts) with what its decision reads. */
export function exchangeGrant(
  provider: Provider,
  binding: { realm(): string; algorithm(): SigningAlgorithm },
  deps: RealmProviderDeps,
): void {
  const { config, tokenInspector, clientAuth } = deps;
  registerTokenExchange(provider, {
    ...binding,
    credentialOf: (ctx) => clientAuth.credentialClaim(ctx),
    context: {
      audiences: exchangeAudiencesOf(config),
      portalAudience: config.ACCOUNT_ADMIN_AUDIENCE,
      ttl: config.ACCESS_TOKEN_TTL,
      inspect: (token) => tokenInspector.inspect(token),
      inspectWorkload: (token) => workloadSubject(clientAuth, binding.realm(), token),
      nowSeconds: () => Date.now() / 1000,
    },
  });
}
