import type { ServiceAccount } from '@plant/shared';
import { ServiceAccountNotFound } from './errors.js';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';
import { toServiceAccount } from './service-account-view.js';

export async function getServiceAccount(ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms'>, tenant: string, clientId: string): Promise<ServiceAccount> {
  const row = await ctx.serviceAccounts.find(tenant, clientId);
  if (!row) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  return toServiceAccount(row);
}
