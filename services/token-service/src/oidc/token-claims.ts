/**
 * The claims of the realm's access tokens (RFC 9068): a service account's (role, grants,
 * version, the credential that obtained it; an exchanged token's subject and `act` chain) and a
 * person's (tenant, role, version, how they signed in). oidc-provider calls these from its JWT
 * customizer and `extraTokenClaims` (realm-configuration.ts).
 */
import { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { ClientAuthentication } from '../client-auth/index.js';
import type { IdentityContext } from '../platform/index.js';
import { principalOf } from './principal-metadata.js';
import { exchangedClaimsOf } from './token-exchange-grant.js';

/**
 * RFC 9068 §2.2.1: a person's access token says how and when they signed in (`acr`,
 * `auth_time`), copied from the authorization code the token is exchanged for, as the ID
 * token's are. A resource server's step-up (account-admin's, RFC 9470) counts a bearer token's
 * own sign-in by these: without them no bearer token could ever pass it. The portal client asks
 * for no refresh tokens (no `offline_access`); plantctl's come from a device code or its
 * refresh token, which carry the approval's sign-in (a refresh keeps the original `auth_time`,
 * so a refreshed token passes step-up no longer than the sign-in did). A token without any
 * carries neither claim and counts as no factor.
 */
function signInContextOf(ctx: KoaContextWithOIDC): { acr?: string; auth_time?: number } {
  const { AuthorizationCode, DeviceCode, RefreshToken } = ctx.oidc.entities;
  // plantctl's tokens come from a device code or a refresh token, which keep the sign-in's.
  const code = AuthorizationCode ?? DeviceCode ?? RefreshToken;
  if (code === undefined) return {};
  return {
    ...(typeof code.acr === 'string' ? { acr: code.acr } : {}),
    ...(typeof code.authTime === 'number' ? { auth_time: code.authTime } : {}),
  };
}

/**
 * Service-account claims go straight into the signed payload; as extraTokenClaims they
 * would ride on the token model and be copied into the payload by a spread on every grant.
 */
export function serviceAccountClaims(
  clientAuth: Pick<ClientAuthentication, 'recordUse' | 'credentialClaim'>,
  realmOf: () => string,
): NonNullable<NonNullable<Configuration['formats']>['customizers']>['jwt'] {
  return (ctx, token, jwt) => {
    if (token.kind !== 'ClientCredentials') return;
    const principal = principalOf(ctx.oidc.client);
    if (!principal) return;
    clientAuth.recordUse(token.clientId!, ctx);
    const claims = jwt.payload as Record<string, unknown>;
    // An exchanged token speaks for its subject, with the actor chain in `act` (token-exchange-grant.ts).
    const exchanged = exchangedClaimsOf(token);
    if (exchanged !== undefined) {
      Object.assign(claims, exchanged);
      return;
    }
    claims.tenant = realmOf();
    claims.principal_type = 'service_account';
    claims.role = principal.role;
    claims.grants = principal.grants;
    claims.ver = principal.version;
    // The credential that obtained it: removing that credential revokes exactly its tokens (decision 0035).
    const credential = clientAuth.credentialClaim(ctx);
    if (credential !== undefined) claims.cred = credential;
  };
}

/** The claims of a person's tokens: their tenant, role and token version, and how they signed in. */
export function userTokenClaims(
  users: IdentityContext['users'],
  realmOf: () => string,
): Configuration['extraTokenClaims'] {
  return async (ctx, token) => {
    if (token.kind === 'ClientCredentials') return undefined;
    const accountId = (token as { accountId?: string }).accountId;
    const tenant = realmOf();
    const user = accountId === undefined ? undefined : await users.find(tenant, accountId);
    // A disabled person is no account: their realm session signs nobody in.
    if (!user || user.disabled_at !== null)
      throw new errors.InvalidGrant('the account is no longer active');
    return {
      tenant,
      principal_type: 'user',
      role: user.role,
      grants: [],
      ver: user.token_version,
      ...signInContextOf(ctx),
    };
  };
}
