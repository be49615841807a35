import { randomUUID } from 'node:crypto';
import type { UserRole } from '@plant/shared';
import { DuplicateUserEmail } from '../data-access/user-repository.js';
import { TenantNotFound, UserEmailTaken } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { hashPassword } from './passwords.js';
import type { CreatedUser } from './user-view.js';

export async function createUser(
  ctx: Pick<IdentityContext, 'users'>,
  tenant: string,
  input: { email: string; password: string; role: UserRole; actor?: string },
): Promise<CreatedUser> {
  const passwordHash = await hashPassword(input.password);
  const user: CreatedUser = { id: randomUUID(), email: input.email, role: input.role };
  let created: boolean;
  try {
    created = await ctx.users.create(tenant, { sub: user.id, email: user.email, role: user.role, passwordHash, createdBy: input.actor ?? null });
  } catch (err) {
    if (err instanceof DuplicateUserEmail) throw new UserEmailTaken();
    throw err;
  }
  if (!created) throw new TenantNotFound();
  return user;
}
