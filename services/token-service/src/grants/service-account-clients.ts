import { PERSON_CLIENT_IDS } from '@plant/shared/api';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type {
  ClientAuthentication,
  ClientAuthSource,
  ClientCredential,
} from '../client-auth/index.js';
import {
  AssertionCheckUnavailable,
  AssertionRefused,
  AssertionRejected,
  AssertionUnverifiable,
  GrantQuotaExceeded,
  SecretExpired,
  SecretExpiredRefusal,
  TooManyFailedAuthentications,
  TooManyRequests,
} from '../platform/index.js';
import {
  PRINCIPAL_METADATA,
  SIGNAL_SCOPES,
  serviceAccountScope,
  type PrincipalMetadata,
  buildClient,
  type Client,
  type ProviderContext,
  replaceClientLookup,
  replaceClientSecretComparison,
  type RealmBinding,
} from '../oidc/index.js';
import { TOKEN_EXCHANGE_GRANT } from '../token-exchange/index.js';

const TOKEN_PATH = '/protocol/openid-connect/token';

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const UNKNOWN_SOURCE: ClientAuthSource = Object.freeze({ ip: 'unknown' });
/** `client_secret` of an account without a secret: not hex, so no presented secret's digest can equal it. */
const NO_SECRET_DIGEST = 'no-secret';

/** A domain refusal as oidc-provider must see it inside its token endpoint (with Retry-After); anything else unchanged. */
export function asOidcError(ctx: ProviderContext | undefined, err: unknown): unknown {
  if (err instanceof AssertionRejected) return new AssertionRefused(err.counted);
  if (err instanceof AssertionCheckUnavailable) return new AssertionUnverifiable(err);
  if (err instanceof SecretExpired) return new SecretExpiredRefusal(err);
  if (!(err instanceof TooManyFailedAuthentications || err instanceof GrantQuotaExceeded))
    return err;
  ctx?.set('Retry-After', String(err.retryAfterSeconds));
  return new TooManyRequests(err.message);
}

/**
 * A service account as an oidc-provider client, in one of two forms. Authenticated by secret:
 * `client_secret` holds the HMAC digest, never the secret (`compareClientSecret` compares
 * digests; nothing that would use it as a key, client_secret_jwt or HS*, is enabled). Authenticated
 * by assertion: method `none`, and only ever handed out for a request whose assertion the
 * domain has just verified (see `assertionOf`).
 */
function serviceAccountClientMetadata(
  credential: ClientCredential,
  byAssertion: boolean,
): Record<string, unknown> {
  const principal: PrincipalMetadata = {
    type: 'service_account',
    role: credential.role,
    grants: credential.grants,
    version: credential.token_version,
    receiveSignals: credential.receive_signals,
    delegations: credential.delegations,
  };
  return {
    client_id: credential.sub,
    ...(byAssertion
      ? { token_endpoint_auth_method: 'none' }
      : {
          // Compared by `verifySecret` against each of the account's secrets, never this value.
          client_secret: credential.secrets[0]?.digest ?? NO_SECRET_DIGEST,
          token_endpoint_auth_method: 'client_secret_basic',
        }),
    // Token exchange only for an account an Account Admin allowed to act for others (unauthorized_client otherwise).
    grant_types:
      credential.delegations.length > 0
        ? ['client_credentials', TOKEN_EXCHANGE_GRANT]
        : ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    // oidc-provider then refuses a grant without a DPoP proof, and binds the token to the proof's key.
    dpop_bound_access_tokens: credential.dpop_bound_access_tokens,
    // What it may ask for (oidc-provider refuses the rest); what it gets unasked is the role's scope.
    scope: credential.receive_signals
      ? `${serviceAccountScope(credential.role, credential.grants)} ${SIGNAL_SCOPES.join(' ')}`
      : serviceAccountScope(credential.role, credential.grants),
    [PRINCIPAL_METADATA]: principal,
  };
}

/**
 * The client assertion of a token request, or undefined when it carries none. oidc-provider is
 * configured without assertion methods, so the `client_assertion` parameters never reach its
 * own check (whose client_id rule would refuse every workload token, and whose replay check
 * reads then writes); they are read here, from the parsed body, with the rules it would apply:
 * one mechanism only, no repeated parameter, the jwt-bearer type.
 */
function assertionOf(ctx: KoaContextWithOIDC): string | undefined {
  const body = ctx.oidc?.body as Record<string, unknown> | undefined;
  if (ctx.oidc?.route !== 'token' || body === undefined) return undefined;
  const { client_assertion: assertion, client_assertion_type: type } = body;
  if (assertion === undefined && type === undefined) return undefined;
  if (Array.isArray(assertion) || Array.isArray(type))
    throw new errors.InvalidRequest(
      'client_assertion and client_assertion_type must not be repeated',
    );
  if (body.client_secret !== undefined || ctx.headers.authorization !== undefined)
    throw new errors.InvalidRequest(
      'client authentication must only be provided using one mechanism',
    );
  if (type !== ASSERTION_TYPE)
    throw new errors.InvalidRequest(`client_assertion_type must have value ${ASSERTION_TYPE}`);
  if (typeof assertion !== 'string' || assertion === '')
    throw new errors.InvalidRequest('client_assertion must be provided');
  return assertion;
}

export interface ServiceAccountClientsDeps {
  /** The realm of the request (fixed for a realm's provider, the request's for the grant engine); its issuer and token endpoint are what an assertion's `aud` may name. */
  binding: RealmBinding;
  clientAuth: ClientAuthentication;
  /** Filled here: the credential each client was built from, to tell when it changed. */
  credentialOf: WeakMap<object, ClientCredential>;
}

/**
 * Service accounts as clients, looked up once through the domain. oidc-provider would build a
 * client from adapter metadata on every lookup (hashing the whole metadata to find it in a
 * 100-entry LRU); the credential object stays the same until the account changes, so the
 * built clients are kept per credential: no hashing per grant, a changed account gets new
 * clients, and any number of active accounts stay built.
 */
export function serveServiceAccountClients(
  provider: Provider,
  { binding, clientAuth, credentialOf }: ServiceAccountClientsDeps,
): void {
  const built = [
    new WeakMap<ClientCredential, Client>(),
    new WeakMap<ClientCredential, Client>(),
  ] as const;
  const clientOf = (credential: ClientCredential, byAssertion: boolean): Client => {
    const cache = built[byAssertion ? 1 : 0];
    let client = cache.get(credential);
    if (client === undefined) {
      client = buildClient(provider, serviceAccountClientMetadata(credential, byAssertion));
      cache.set(credential, client);
      credentialOf.set(client, credential);
    }
    return client;
  };

  replaceClientLookup(
    provider,
    (findStatic) =>
      async function findClient(id: unknown): Promise<Client | undefined> {
        if (typeof id !== 'string' || id.length === 0 || PERSON_CLIENT_IDS.has(id))
          return findStatic(id);
        const ctx = Provider.ctx;
        const source = ctx ?? UNKNOWN_SOURCE;
        const assertion = ctx === undefined ? undefined : assertionOf(ctx);
        const tenant = binding.realm(ctx);
        // A fresh cached credential is read without an await: this runs once per grant.
        const hit = clientAuth.cachedCredential(tenant, id, source);
        const credential =
          hit !== undefined
            ? hit.row
            : await clientAuth
                .findCredential(tenant, id, source)
                .catch((err: unknown) => Promise.reject(asOidcError(ctx, err)));
        if (credential === undefined) return undefined;
        if (assertion === undefined) return clientOf(credential, false);
        const issuer = binding.issuer(ctx!);
        if (clientAuth.verifiedAssertion(ctx!) === undefined)
          await clientAuth
            .verifyAssertion(
              credential,
              assertion,
              new Set([issuer, `${issuer}${TOKEN_PATH}`]),
              ctx!,
            )
            .catch((err: unknown) => Promise.reject(asOidcError(ctx, err)));
        return clientOf(credential, true);
      },
  );

  replaceClientSecretComparison(provider, (client, presented) => {
    const ctx = Provider.ctx;
    const credential = credentialOf.get(client);
    // Only clients built here compare secrets (the portal client has none to compare).
    if (credential === undefined) return false;
    let verdict: boolean | Promise<boolean>;
    try {
      verdict = clientAuth.verifySecret(credential, presented, ctx ?? UNKNOWN_SOURCE);
    } catch (err) {
      throw asOidcError(ctx, err);
    }
    return typeof verdict === 'boolean'
      ? verdict
      : verdict.catch((err: unknown) => Promise.reject(asOidcError(ctx, err)));
  });
}
