/**
 * What a service account authenticates with: a secret, public keys (private_key_jwt) and
 * trusted workloads (another issuer's tokens). Removing one revokes the tokens minted before
 * it went, as a secret reset does; every change goes through `publishChange`
 * (credential-changes.ts). Adding a key or a trust is add-service-account-key.ts and
 * add-service-account-trust.ts; checking a presented credential is authenticate-client.ts.
 */
import type { ServiceAccountCredentials } from '@plant/shared';
import { publishChange } from './credential-changes.js';
import { KeyNotFound, NoSecret, SecretStillNeeded, ServiceAccountNotFound, TrustNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { toServiceAccountCredentials } from './service-account-view.js';
import { assertTenantExists } from './tenants.js';

export async function getServiceAccountCredentials(ctx: Pick<IdentityContext, 'accountCredentials' | 'realms'>, tenant: string, clientId: string): Promise<ServiceAccountCredentials> {
  const row = await ctx.accountCredentials.credentials(tenant, clientId);
  if (!row) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  return toServiceAccountCredentials(clientId, row);
}

/** The key stops working, and the tokens minted before it went are revoked (version bumped with the removal, as a secret reset does). */
export async function removeServiceAccountKey(ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>, tenant: string, clientId: string, keyId: string): Promise<void> {
  await publishChange(ctx, tenant, await ctx.accountCredentials.removeKey(tenant, clientId, keyId), { 'not-found': KeyNotFound });
}

/** The workload's tokens stop authenticating the account, and the tokens minted before are revoked (as a removed key's). */
export async function removeServiceAccountTrust(ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>, tenant: string, clientId: string, trustId: string): Promise<void> {
  await publishChange(ctx, tenant, await ctx.accountCredentials.removeTrust(tenant, clientId, trustId), { 'not-found': TrustNotFound });
}

/**
 * For an account that uses only keys or trusts: the secret goes (nothing left to leak), and the
 * tokens minted with it are revoked. Refused while the secret is the only credential. Reset
 * Secret gives the account one again.
 */
export async function removeServiceAccountSecret(ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>, tenant: string, clientId: string): Promise<void> {
  await publishChange(ctx, tenant, await ctx.accountCredentials.removeSecret(tenant, clientId), { 'no-secret': NoSecret, 'no-other-credential': SecretStillNeeded });
}
