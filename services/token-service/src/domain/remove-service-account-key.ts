import { publishChange } from './credential-changes.js';
import { KeyNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';

/** The key stops working, and the tokens minted before it went are revoked (version bumped with the removal, as a secret reset does). */
export async function removeServiceAccountKey(ctx: Pick<IdentityContext, 'accountCredentials' | 'realms' | 'publisher'>, tenant: string, clientId: string, keyId: string): Promise<void> {
  await publishChange(ctx, tenant, await ctx.accountCredentials.removeKey(tenant, clientId, keyId), { 'not-found': KeyNotFound });
}
