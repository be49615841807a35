import { publishChange } from './credential-changes.js';
import { TrustNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';

/** The workload's tokens stop authenticating the account, and the tokens minted before are revoked (as a removed key's). */
export async function removeServiceAccountTrust(ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>, tenant: string, clientId: string, trustId: string): Promise<void> {
  await publishChange(ctx, tenant, await ctx.accountCredentials.removeTrust(tenant, clientId, trustId), { 'not-found': TrustNotFound });
}
