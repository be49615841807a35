import { ServiceAccountNotFound } from './errors.js';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';

/** The credentials go at once; the principal stays, deleted, so its tokens are refused (published after commit). */
export async function deleteServiceAccount(ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms' | 'publisher'>, tenant: string, clientId: string): Promise<void> {
  const entry = await ctx.serviceAccounts.delete(tenant, clientId);
  if (!entry) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  await ctx.publisher.publish(entry);
}
