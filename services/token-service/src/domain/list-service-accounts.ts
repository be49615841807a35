import type { ServiceAccount } from '@plant/shared';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';
import { toServiceAccount } from './service-account-view.js';

export async function listServiceAccounts(ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms'>, tenant: string): Promise<ServiceAccount[]> {
  const rows = await ctx.serviceAccounts.list(tenant);
  if (rows.length === 0) await assertTenantExists(ctx, tenant);
  return rows.map(toServiceAccount);
}
