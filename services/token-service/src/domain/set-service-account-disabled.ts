import type { ServiceAccount } from '@plant/shared';
import { publishChange } from './credential-changes.js';
import { getServiceAccount } from './get-service-account.js';
import type { IdentityContext } from './identity-context.js';

/**
 * Disable: every token of the account is refused at its next check (the version is bumped, as
 * a reset does) and no credential authenticates it until it is enabled. Enable: its
 * credentials work again; nothing is revoked. Asking for the state it has changes nothing.
 */
export async function setServiceAccountDisabled(
  ctx: Pick<IdentityContext, 'accountCredentials' | 'serviceAccounts' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  disabled: boolean,
): Promise<ServiceAccount> {
  const outcome = await ctx.accountCredentials.setDisabled(tenant, clientId, disabled);
  if (outcome !== 'unchanged') await publishChange(ctx, tenant, outcome, {});
  return getServiceAccount(ctx, tenant, clientId);
}
