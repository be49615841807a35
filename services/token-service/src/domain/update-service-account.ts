import type { Grant, ServiceAccount, ServiceAccountRole } from '@plant/shared';
import { ServiceAccountNotFound } from './errors.js';
import { getServiceAccount } from './get-service-account.js';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';

/** A role or grants change: the account's older tokens are revoked (version bumped with the change, published after commit). */
export async function updateServiceAccount(
  ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  input: { role?: ServiceAccountRole | undefined; grants?: Grant[] | undefined },
): Promise<ServiceAccount> {
  const entry = await ctx.serviceAccounts.update(tenant, clientId, { role: input.role, grants: input.grants });
  if (!entry) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  await ctx.publisher.publish(entry);
  return getServiceAccount(ctx, tenant, clientId);
}
