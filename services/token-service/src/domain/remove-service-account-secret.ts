import { publishChange } from './credential-changes.js';
import { NoSecret, SecretStillNeeded } from './errors.js';
import type { IdentityContext } from './identity-context.js';

/**
 * For an account that uses only keys or trusts: the secret goes (nothing left to leak), and the
 * tokens minted with it are revoked. Refused while the secret is the only credential. Reset
 * Secret gives the account one again.
 */
export async function removeServiceAccountSecret(ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>, tenant: string, clientId: string): Promise<void> {
  await publishChange(ctx, tenant, await ctx.accountCredentials.removeSecret(tenant, clientId), { 'no-secret': NoSecret, 'no-other-credential': SecretStillNeeded });
}
