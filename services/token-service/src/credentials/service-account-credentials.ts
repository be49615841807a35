/**
 * What a service account authenticates with: a secret, public keys (private_key_jwt) and
 * trusted workloads (another issuer's tokens). Adding a secret, a key or a trust revokes nothing;
 * removing one revokes exactly the tokens it obtained (their `cred` claim, decision 0035). Every change
 * goes through `publishChange`, so each replica's credential cache and every resource server
 * hear of it the same way. Checking a presented credential is authenticate-client.ts.
 */
import { randomBytes } from 'node:crypto';
import {
  MAX_KEYS_PER_SERVICE_ACCOUNT,
  MAX_TRUSTS_PER_SERVICE_ACCOUNT,
  type RevocationEntry,
  type ServiceAccountCredentials,
  type ServiceAccountKey,
  type ServiceAccountSecretWithValue,
  type ServiceAccountTrust,
} from '@plant/shared/token-service-client';
import { newSecretId } from './account-secret-repository.js';
import { generateClientSecret } from './client-secrets.js';
import { urlProblem } from '../client-auth/index.js';
import {
  DuplicateKey,
  DuplicateTrust,
  InvalidTrust,
  KeyLimitReached,
  KeyNotFound,
  InvalidSecretExpiry,
  NoSecret,
  SecretLimitReached,
  SecretNotFound,
  SecretStillNeeded,
  ServiceAccountNotFound,
  TrustedIssuerLimitReached,
  TrustLimitReached,
  TrustNotFound,
  type IdentityContext,
} from '../platform/index.js';
import { importPublicKey } from './public-keys.js';
import {
  toServiceAccountCredentials,
  toServiceAccountKey,
  toServiceAccountSecret,
  toServiceAccountTrust,
} from '../service-accounts/index.js';
import { assertTenantExists } from '../realms/index.js';

type ErrorClass = new () => Error;

/**
 * What every credential change does with the repository's answer: no account is 404 (or an
 * unknown tenant's 404), a refusal throws its error, and a change is published after commit:
 * every replica's credential cache drops the account at once (this one before the answer),
 * and resource servers apply the version, which only a revoking change (a removed credential,
 * disabling) has bumped. Shared by every credential change here and by disabling in
 * service-accounts.ts.
 */
export async function publishChange<R extends string>(
  ctx: Pick<IdentityContext, 'realms' | 'publisher'>,
  tenant: string,
  outcome: RevocationEntry | R | undefined,
  refusals: Record<R, ErrorClass>,
): Promise<void> {
  if (outcome === undefined) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  if (typeof outcome === 'string') throw new refusals[outcome]();
  await ctx.publisher.publish(outcome);
}

export async function getServiceAccountCredentials(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'credentialHygiene' | 'realms'>,
  tenant: string,
  clientId: string,
): Promise<ServiceAccountCredentials> {
  const [row, leaks] = await Promise.all([
    ctx.accountCredentials.credentials(tenant, clientId),
    ctx.credentialHygiene.leaks(tenant, clientId),
  ]);
  if (!row) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  return toServiceAccountCredentials(clientId, row, leaks);
}

/** The key stops working, and exactly the tokens it obtained are revoked (decision 0035); the account's other credentials' tokens keep working. */
export async function removeServiceAccountKey(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  keyId: string,
): Promise<void> {
  await publishChange(
    ctx,
    tenant,
    await ctx.accountCredentials.removeKey(tenant, clientId, keyId),
    { 'not-found': KeyNotFound },
  );
}

/** The workload's tokens stop authenticating the account, and exactly the tokens it obtained are revoked (as a removed key's). */
export async function removeServiceAccountTrust(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  trustId: string,
): Promise<void> {
  await publishChange(
    ctx,
    tenant,
    await ctx.accountCredentials.removeTrust(tenant, clientId, trustId),
    { 'not-found': TrustNotFound },
  );
}

/**
 * For an account that uses only keys or trusts: every secret goes (nothing left to leak), and
 * exactly the tokens minted with them are revoked. Refused while the secrets are the only
 * credential. Reset Secret gives the account one again.
 */
export async function removeServiceAccountSecret(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
): Promise<void> {
  await publishChange(ctx, tenant, await ctx.accountCredentials.removeSecret(tenant, clientId), {
    'no-secret': NoSecret,
    'no-other-credential': SecretStillNeeded,
  });
}

/** The longest a secret may be given to live: the realm policy's longest maximum age. */
const MAX_SECRET_LIFETIME_MS = 730 * 86_400_000;

/** `expires_at` as a Date: in the future and at most 730 days ahead; absent: none. */
function secretExpiry(expiresAt: string | undefined, now = Date.now()): Date | null {
  if (expiresAt === undefined) return null;
  const at = new Date(expiresAt);
  if (!(at.getTime() > now && at.getTime() <= now + MAX_SECRET_LIFETIME_MS))
    throw new InvalidSecretExpiry();
  return at;
}

/**
 * "Add a secret": a second secret beside the first, shown once in the answer, optionally
 * expiring. At most two live (`SecretLimitReached`; a secret past its expiry or age no longer
 * counts, and goes). Adding revokes nothing: the first secret and its tokens keep working, so a
 * client moves to the new one with no failed call, and the old one is removed after
 * (`removeServiceAccountSecretById`), which revokes exactly its tokens.
 */
export async function addServiceAccountSecret(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher' | 'secrets'>,
  tenant: string,
  clientId: string,
  input: { expires_at?: string | undefined; actor?: string | undefined },
): Promise<ServiceAccountSecretWithValue> {
  const expiresAt = secretExpiry(input.expires_at);
  const secret = generateClientSecret();
  const id = newSecretId();
  const outcome = await ctx.accountCredentials.addSecret(tenant, clientId, {
    id,
    digest: ctx.secrets.digest(secret),
    expiresAt,
    createdBy: input.actor ?? null,
  });
  await publishChange(ctx, tenant, outcome, { 'limit-reached': SecretLimitReached });
  const row = await ctx.accountCredentials.credentials(tenant, clientId);
  const added = row?.secrets.find((s) => s.id === id);
  if (row === undefined || added === undefined) throw new SecretNotFound();
  return { ...toServiceAccountSecret(added, row.max_age_days), secret };
}

/** One secret goes, and exactly the tokens it obtained are revoked: the account's other secret, keys and trusts, and their tokens, keep working. */
export async function removeServiceAccountSecretById(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  secretId: string,
): Promise<void> {
  await publishChange(
    ctx,
    tenant,
    await ctx.accountCredentials.removeSecretById(tenant, clientId, secretId),
    { 'not-found': SecretNotFound, 'no-other-credential': SecretStillNeeded },
  );
}

/**
 * A public key for `private_key_jwt`: checked (public only, RSA ≥ 2048 bits, EC P-256 or
 * Ed25519), stored normalised, at most five per account. Adding revokes nothing; the key works
 * from the answer on (every replica's cache drops the account).
 */
export async function addServiceAccountKey(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  input: {
    jwk?: Record<string, unknown> | undefined;
    pem?: string | undefined;
    actor?: string | undefined;
  },
): Promise<ServiceAccountKey> {
  const key = importPublicKey(input);
  const outcome = await ctx.accountCredentials.addKey(
    tenant,
    clientId,
    { ...key, createdBy: input.actor ?? null },
    MAX_KEYS_PER_SERVICE_ACCOUNT,
  );
  await publishChange(ctx, tenant, outcome, {
    duplicate: DuplicateKey,
    'limit-reached': KeyLimitReached,
  });
  const added = (await ctx.accountCredentials.credentials(tenant, clientId))?.keys.find(
    (k) => k.id === key.id,
  );
  if (added === undefined) throw new DuplicateKey('The key was removed again while it was added');
  return toServiceAccountKey(added);
}

/** What an issuer URL may be (the fetch policy, checked again at each fetch with the addresses the name resolves to then). */
export interface TrustPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
  issuersPerTenant: number;
  /** This service's own base URL: its realms are never trusted issuers (a token of one account would become another's). */
  authUrl: string;
}

/** Why `issuer` cannot be trusted, or undefined. Nothing is fetched here: an issuer is only fetched when a token names it. */
export function issuerProblem(issuer: string, policy: TrustPolicy): string | undefined {
  const url = URL.parse(issuer);
  if (url === null) return 'issuer must be a URL';
  if (url.search !== '') return 'issuer must not have a query';
  const problem = urlProblem(url, policy);
  if (problem !== undefined) return `issuer ${problem}`;
  const own = URL.parse(policy.authUrl);
  if (own !== null && url.origin === own.origin)
    return "issuer must not be one of this service's own realms";
  return undefined;
}

/**
 * A trusted workload: tokens its platform issues (`iss` = issuer, `sub` = subject, `aud` =
 * audience) authenticate the account, with no secret stored anywhere. Exact strings, as OIDC
 * compares them. At most MAX_TRUSTS_PER_SERVICE_ACCOUNT per account, and `issuersPerTenant`
 * distinct issuers over the tenant (each issuer costs fetches and a cache entry). Adding
 * revokes nothing.
 */
export async function addServiceAccountTrust(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher' | 'trustPolicy'>,
  tenant: string,
  clientId: string,
  input: { issuer: string; subject: string; audience: string; actor?: string | undefined },
): Promise<ServiceAccountTrust> {
  const problem = issuerProblem(input.issuer, ctx.trustPolicy);
  if (problem !== undefined) throw new InvalidTrust(problem);
  const id = `trust-${randomBytes(8).toString('hex')}`;
  const trust = {
    id,
    issuer: input.issuer,
    subject: input.subject,
    audience: input.audience,
    createdBy: input.actor ?? null,
  };
  const limits = {
    perAccount: MAX_TRUSTS_PER_SERVICE_ACCOUNT,
    issuersPerTenant: ctx.trustPolicy.issuersPerTenant,
  };
  const outcome = await ctx.accountCredentials.addTrust(tenant, clientId, trust, limits);
  await publishChange(ctx, tenant, outcome, {
    duplicate: DuplicateTrust,
    'limit-reached': TrustLimitReached,
    'issuer-limit-reached': TrustedIssuerLimitReached,
  });
  const added = (await ctx.accountCredentials.credentials(tenant, clientId))?.trusts.find(
    (t) => t.id === id,
  );
  // Removed again between the insert and this read: a conflict the caller may retry.
  if (added === undefined)
    throw new DuplicateTrust('The trust was removed again while it was added');
  return toServiceAccountTrust(added);
}
