import {
  PERSON_CLIENT_IDS,
  PLANTCTL_CLIENT_ID,
  PORTAL_CLIENT_ID,
  type SigningAlgorithm,
} from '@plant/shared/api';
import { createHash } from 'node:crypto';
import { DPOP_SIGNING_ALGS, type DpopReplayStore } from '@plant/resource-auth';
import { errors, type Configuration, type ExternalSigningKey } from 'oidc-provider';
import { listOf, type TokenServiceConfig } from '../config.js';
import type { ClientAuthentication } from '../client-auth/index.js';
import type { IdentityContext } from '../platform/index.js';
import { realmPath } from '../realms/index.js';
import { sameAudience } from '../token-exchange/index.js';
import { postgresAdapterFactory } from './postgres-adapter.js';
import { renderErrorPage, renderLogoutPage, renderLogoutSuccessPage } from './provider-pages.js';
import { DEVICE_CODE_TTL_SECONDS, PLANTCTL_CLIENT, deviceFlowFeature } from './device-flow.js';
import { EXTERNAL_SIGNING } from './oidc-provider-internals.js';
import {
  applyClientCredentialsScope,
  PRINCIPAL_METADATA,
  principalOf,
  ROLE_SCOPES,
  SIGNAL_SCOPES,
} from './principal-metadata.js';
import { serviceAccountClaims, userTokenClaims } from './token-claims.js';

/** The configuration a realm's provider reads (no secret but the cookie keys: the pepper never reaches oidc-provider). */
export type RealmConfig = Pick<
  TokenServiceConfig,
  | 'AUTH_URL'
  | 'PORTAL_URL'
  | 'COOKIE_KEYS'
  | 'ACCESS_TOKEN_TTL'
  | 'PLANT_STORE_AUDIENCE'
  | 'ACCOUNT_ADMIN_AUDIENCE'
  | 'API_AUDIENCES'
  | 'DPOP_NONCE_KEYS'
  | 'TRUST_PROXY'
>;

/** A person of the realm as the sign-in rules read them (second-factors' SignInPerson). */
type RealmPerson = NonNullable<Awaited<ReturnType<IdentityContext['userFactors']['person']>>>;

/**
 * What a realm's sign-in requires, as oidc-provider is configured with it: the rules are sign-in's
 * and second-factors' (sign-in/sign-in-policy.ts gathers them), handed in by the composition
 * root. Those wings sit above this one (they use its pages and providers), so it names the port
 * and imports neither.
 */
export interface SignInRules {
  /** What a sign-in may verify (`acr`): a second factor, or the password alone. */
  acrValues: string[];
  /** oidc-provider's interaction policy with the realm's checks, reading a session's person by `personOf`. */
  policy(
    personOf: (sub: string) => Promise<RealmPerson | undefined>,
  ): NonNullable<Configuration['interactions']>['policy'];
  /** Whether the person has a second factor (the `factors_enrolled` claim). */
  factorsEnrolled(person: RealmPerson): boolean;
}

export interface RealmConfigurationDeps {
  config: RealmConfig;
  identity: Pick<IdentityContext, 'users' | 'userFactors' | 'oidcPayloads'>;
  clientAuth: ClientAuthentication;
  /** Where DPoP proof ids are claimed (replay-detection.ts), shared with the resource servers' kind of store. */
  replay: DpopReplayStore;
  signInRules: SignInRules;
}

/** How long a started sign-in (its interaction row) lives; the budget of starts counts over the same window. */
export const INTERACTION_TTL_SECONDS = 600;

/**
 * DPoP at the token endpoint (RFC 9449 §5): a proof binds the token to its key; a service
 * account with `dpop_bound_access_tokens` gets nothing without one (realm-provider.ts). With
 * nonce keys every proof must carry a nonce the endpoint issued (§8): oidc-provider derives its
 * nonces from one 32-byte secret, the first key's digest, the same on every replica.
 */
function dPoPFeature(config: RealmConfig): NonNullable<Configuration['features']>['dPoP'] {
  const [nonceKey] = listOf(config.DPOP_NONCE_KEYS);
  if (nonceKey === undefined) return { enabled: true };
  return {
    enabled: true,
    nonceSecret: createHash('sha256').update(nonceKey).digest(),
    requireNonce: () => true,
  };
}

/**
 * What oidc-provider does for a realm: its routes (Keycloak paths), clients (the static portal
 * client; service accounts come from `Client.find`, see realm-provider.ts), signing key, token
 * formats and claims, sign-in interactions and pages. Our code that runs inside its requests is
 * plugged in by realm-provider.ts.
 */
// long: oidc-provider's configuration object, data; its hooks are the named functions below
export function realmConfiguration(
  binding: RealmBinding,
  signingKeys: ExternalSigningKey[],
  deps: RealmConfigurationDeps,
): Configuration {
  const { config } = deps;
  const { users } = deps.identity;
  const path = binding.cookiePath;
  const realmOf = () => binding.realm();
  const cookieKeys = config.COOKIE_KEYS.split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const portalUrl = config.PORTAL_URL.replace(/\/+$/, '');
  const apiAudiences = listOf(config.API_AUDIENCES);

  return {
    adapter: postgresAdapterFactory(realmOf, deps.identity.oidcPayloads),
    clients: [
      {
        client_id: PORTAL_CLIENT_ID,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [`${portalUrl}/auth/callback`],
        post_logout_redirect_uris: [`${portalUrl}/`],
        scope: 'openid email profile plants:read plants:write',
      },
      PLANTCTL_CLIENT,
    ],
    // ID tokens in the realm's algorithm (oidc-provider's default, RS256, is refused as client
    // metadata by a realm that signs ES256 only); the grant engine picks the portal client of the
    // request's realm's algorithm (grant-engine.ts).
    clientDefaults: {
      grant_types: ['authorization_code'],
      id_token_signed_response_alg: binding.algorithm(),
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    // The realm's key (kept by realm-providers.ts), or the grant engine's keys, one per algorithm, that sign with the request's realm's.
    jwks: { keys: signingKeys },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    enabledJWA: { dPoPSigningAlgValues: [...DPOP_SIGNING_ALGS] },
    // introspection_endpoint is added per request (realm-provider.ts, advertiseOwnEndpoints): our own route serves it.
    discovery: { claim_types_supported: ['normal'] },
    responseTypes: ['code'],
    scopes: [
      'openid',
      'email',
      'profile',
      'offline_access',
      'plants:read',
      'plants:write',
      ...SIGNAL_SCOPES,
    ],
    // acr, amr and auth_time ride with `openid`: oidc-provider writes them into the ID token
    // only when a scope or the request names them, and the portal needs them on every sign-in.
    claims: {
      openid: ['sub', 'acr', 'amr', 'auth_time'],
      email: ['email'],
      profile: ['role', 'tenant', 'factors_enrolled'],
    },
    // What a sign-in verified (sign-in/next-step.ts): a second factor, or the password alone.
    acrValues: deps.signInRules.acrValues,
    // The portal's request for an enrolment inside a sign-in (PLANT_ACTIONS).
    extraParams: ['plant_action'],
    // The ID token carries the scope's claims itself (the portal reads role and tenant from it).
    conformIdTokenClaims: false,
    extraClientMetadata: { properties: [PRINCIPAL_METADATA] },
    cookies: {
      keys: cookieKeys,
      names: { session: '_session', interaction: '_interaction', resume: '_interaction_resume' },
      long: { httpOnly: true, sameSite: 'lax', path, signed: true },
      short: { httpOnly: true, sameSite: 'lax', path, signed: true },
    },
    routes: {
      authorization: '/protocol/openid-connect/auth',
      token: '/protocol/openid-connect/token',
      jwks: '/protocol/openid-connect/certs',
      userinfo: '/protocol/openid-connect/userinfo',
      end_session: '/protocol/openid-connect/logout',
      // Keycloak's paths for the device grant and revocation.
      device_authorization: '/protocol/openid-connect/auth/device',
      code_verification: '/device',
      revocation: '/protocol/openid-connect/revoke',
    },
    pkce: { required: () => true },
    ttl: {
      AccessToken: config.ACCESS_TOKEN_TTL,
      ClientCredentials: config.ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      IdToken: config.ACCESS_TOKEN_TTL,
      Interaction: INTERACTION_TTL_SECONDS,
      DeviceCode: DEVICE_CODE_TTL_SECONDS,
      // plantctl's refresh token: a working day's sessions, then sign in again.
      RefreshToken: 8 * 3600,
      Session: 8 * 3600,
      Grant: 8 * 3600,
    },
    features: realmFeatures(config, binding, apiAudiences),
    formats: { customizers: { jwt: serviceAccountClaims(deps.clientAuth, realmOf) } },
    extraTokenClaims: userTokenClaims(users, realmOf),
    findAccount: accountFinder(deps, realmOf),
    interactions: {
      policy: deps.signInRules.policy((sub) => deps.identity.userFactors.person(realmOf(), sub)),
      url: (_ctx, interaction) => `${realmPath(realmOf())}/interaction/${interaction.uid}`,
    },
    loadExistingGrant: portalGrantLoader(config, users, realmOf),
    issueRefreshToken: plantctlKeepsRefreshToken,
    expiresWithSession: async (_ctx, code) => !keepsRefreshToken(code.clientId, code.scopes),
    renderError: renderErrorPage,
  };
}

/**
 * plantctl's sign-ins end with a refresh token, whichever way it signed in. oidc-provider keeps
 * `offline_access` in an authorization request only with `prompt=consent` (OIDC Core §11), and
 * these pages never ask consent (the grant is first-party, portalGrantLoader), so the loopback
 * redirect's code would carry no `offline_access` and give none, while the device grant's does:
 * for plantctl the scope its grant holds decides, not the request's prompt. The refresh token
 * is DPoP-bound like the device grant's (a public client's always are), and does not end with
 * the browser's realm session (the person signed in for the terminal, not for that browser).
 */
function keepsRefreshToken(clientId: string | undefined, scopes: Set<string>): boolean {
  return scopes.has('offline_access') || clientId === PLANTCTL_CLIENT_ID;
}

const plantctlKeepsRefreshToken: NonNullable<Configuration['issueRefreshToken']> = async (
  _ctx,
  client,
  code,
) => client.grantTypeAllowed('refresh_token') && keepsRefreshToken(client.clientId, code.scopes);

type RealmBinding = { realm(): string; algorithm(): SigningAlgorithm; cookiePath: string };

/** oidc-provider's features as a realm uses them. */
function realmFeatures(
  config: RealmConfigurationDeps['config'],
  binding: RealmBinding,
  apiAudiences: string[],
): NonNullable<Configuration['features']> {
  return {
    devInteractions: { enabled: false },
    // No pushed authorization requests: the portal, the only client that signs people in,
    // sends its request in the URL, and each push stored up to 56 KB for anyone who asked
    // (docs/decisions/0012-pushed-authorization-requests-off.md).
    pushedAuthorizationRequests: { enabled: false },
    dPoP: dPoPFeature(config),
    externalSigningSupport: EXTERNAL_SIGNING,
    clientCredentials: { enabled: true },
    deviceFlow: deviceFlowFeature(),
    introspection: { enabled: false },
    // plantctl's `logout` revokes its refresh token (RFC 7009); a public client only its own.
    revocation: { enabled: true },
    userinfo: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      logoutSource: renderLogoutPage,
      postLogoutSuccessSource: renderLogoutSuccessPage,
    },
    resourceIndicators: {
      enabled: true,
      // Service accounts default to the Plant Store. The portal gets a userinfo token unless it names a resource.
      defaultResource: (_ctx, client, oneOf) => {
        if (oneOf && oneOf.length > 0) return oneOf;
        return PERSON_CLIENT_IDS.has(client.clientId) ? undefined : config.PLANT_STORE_AUDIENCE;
      },
      // plantctl's token requests (device code, refresh) get the resource its sign-in was for
      // without naming it again: one audience, account-admin (docs/device-flow.md).
      useGrantedResource: (ctx) => ctx.oidc.client?.clientId === PLANTCTL_CLIENT_ID,
      getResourceServerInfo: (ctx, indicator, client) => {
        // A person's clients (the portal, plantctl) may ask for account-admin tokens.
        const isPortal = PERSON_CLIENT_IDS.has(client.clientId);
        let audience: string | undefined;
        if (sameAudience(indicator, config.PLANT_STORE_AUDIENCE))
          audience = config.PLANT_STORE_AUDIENCE;
        // Service accounts never get account-admin tokens: automation cannot manage service accounts.
        else if (isPortal && sameAudience(indicator, config.ACCOUNT_ADMIN_AUDIENCE))
          audience = config.ACCOUNT_ADMIN_AUDIENCE;
        // Other teams' APIs (@plant/resource-auth) are for service accounts, as the Plant Store is.
        else if (!isPortal) audience = apiAudiences.find((api) => sameAudience(indicator, api));
        if (audience === undefined) throw new errors.InvalidTarget();
        const principal = principalOf(client);
        if (principal && ctx.oidc.params?.grant_type === 'client_credentials')
          applyClientCredentialsScope(ctx, principal);
        return {
          audience,
          scope: 'plants:read plants:write ssf.manage ssf.read',
          accessTokenTTL: config.ACCESS_TOKEN_TTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: binding.algorithm() } },
        };
      },
    },
  };
}

/** A person of the realm as oidc-provider's account: its ID token and userinfo claims. */
function accountFinder(
  deps: RealmConfigurationDeps,
  realmOf: () => string,
): Configuration['findAccount'] {
  return async (_ctx, sub) => {
    const tenant = realmOf();
    // A disabled person has no account here: no ID token, no userinfo, no session resumed.
    const person = await deps.identity.userFactors.person(tenant, sub);
    if (!person || person.disabled) return undefined;
    return {
      accountId: person.sub,
      claims: () => ({
        sub: person.sub,
        email: person.email,
        role: person.role,
        tenant,
        factors_enrolled: deps.signInRules.factorsEnrolled(person),
      }),
    };
  };
}

/** The portal's and plantctl's grant, from the person's role (no consent screen). */
function portalGrantLoader(
  config: RealmConfigurationDeps['config'],
  users: RealmConfigurationDeps['identity']['users'],
  realmOf: () => string,
): Configuration['loadExistingGrant'] {
  return async (ctx) => {
    // The portal and plantctl are first-party: sign-in alone grants what the user's role allows, no consent screen.
    const accountId = ctx.oidc.session?.accountId;
    const client = ctx.oidc.client;
    if (!accountId || !client || !PERSON_CLIENT_IDS.has(client.clientId)) return undefined;
    const user = await users.find(realmOf(), accountId);
    if (!user || user.disabled_at !== null) return undefined;
    const existingId = ctx.oidc.session!.grantIdFor(client.clientId);
    const existing = existingId ? await ctx.oidc.provider.Grant.find(existingId) : undefined;
    if (existing) return existing;
    const grant = new ctx.oidc.provider.Grant({ accountId, clientId: client.clientId });
    const roleScope = ROLE_SCOPES[user.role]!;
    // plants:* are registered scopes, so oidc-provider counts them among the OIDC scopes of the grant too.
    // plantctl keeps a refresh token (offline_access), DPoP-bound to its key (device-flow.ts).
    const offline = client.clientId === PLANTCTL_CLIENT_ID ? ' offline_access' : '';
    grant.addOIDCScope(`openid email profile ${roleScope}${offline}`);
    grant.addResourceScope(config.PLANT_STORE_AUDIENCE, roleScope);
    grant.addResourceScope(config.ACCOUNT_ADMIN_AUDIENCE, roleScope);
    await grant.save();
    return grant;
  };
}
