import type { User } from '@plant/shared';
import { UserNotFound } from './errors.js';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';
import { toUser } from './user-view.js';

export async function getUser(ctx: Pick<IdentityContext, 'users' | 'realms'>, tenant: string, id: string): Promise<User> {
  const row = await ctx.users.find(tenant, id);
  if (!row) {
    await assertTenantExists(ctx, tenant);
    throw new UserNotFound();
  }
  return toUser(row);
}
