import type { ServiceAccountCredentials } from '@plant/shared';
import { ServiceAccountNotFound } from './errors.js';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';
import { toServiceAccountCredentials } from './service-account-view.js';

export async function getServiceAccountCredentials(ctx: Pick<IdentityContext, 'accountCredentials' | 'realms'>, tenant: string, clientId: string): Promise<ServiceAccountCredentials> {
  const row = await ctx.accountCredentials.credentials(tenant, clientId);
  if (!row) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  return toServiceAccountCredentials(clientId, row);
}
