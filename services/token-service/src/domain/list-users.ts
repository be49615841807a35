import type { User } from '@plant/shared';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';
import { toUser } from './user-view.js';

export async function listUsers(ctx: Pick<IdentityContext, 'users' | 'realms'>, tenant: string): Promise<User[]> {
  const rows = await ctx.users.list(tenant);
  if (rows.length === 0) await assertTenantExists(ctx, tenant);
  return rows.map(toUser);
}
