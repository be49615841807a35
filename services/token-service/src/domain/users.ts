/**
 * Users of a realm (people who sign in with a password): created by the CLI, read over the
 * internal API (the portal re-checks a session's role this way). Passwords are kept only as
 * their hash (passwords.ts); signing in is authenticate-user.ts.
 */
import { randomUUID } from 'node:crypto';
import type { User, UserRole } from '@plant/shared/token-service-client';
import { DuplicateUserEmail, type UserRow } from '../data-access/user-repository.js';
import { TenantNotFound, UserEmailTaken, UserNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';
import { hashPassword } from './passwords.js';
import { assertTenantExists } from './tenants.js';

/** A user as the create commands answer it. */
export interface CreatedUser {
  id: string;
  email: string;
  role: UserRole;
}

export function toUser(row: UserRow): User {
  return {
    id: row.sub,
    email: row.email,
    role: row.role,
    created_at: new Date(row.created_at).toISOString(),
  };
}

export async function createUser(
  ctx: Pick<IdentityContext, 'users'>,
  tenant: string,
  input: { email: string; password: string; role: UserRole; actor?: string },
): Promise<CreatedUser> {
  const passwordHash = await hashPassword(input.password);
  const user: CreatedUser = { id: randomUUID(), email: input.email, role: input.role };
  let created: boolean;
  try {
    created = await ctx.users.create(tenant, {
      sub: user.id,
      email: user.email,
      role: user.role,
      passwordHash,
      createdBy: input.actor ?? null,
    });
  } catch (err) {
    if (err instanceof DuplicateUserEmail) throw new UserEmailTaken();
    throw err;
  }
  if (!created) throw new TenantNotFound();
  return user;
}

export async function getUser(
  ctx: Pick<IdentityContext, 'users' | 'realms'>,
  tenant: string,
  id: string,
): Promise<User> {
  const row = await ctx.users.find(tenant, id);
  if (!row) {
    await assertTenantExists(ctx, tenant);
    throw new UserNotFound();
  }
  return toUser(row);
}

export async function listUsers(
  ctx: Pick<IdentityContext, 'users' | 'realms'>,
  tenant: string,
): Promise<User[]> {
  const rows = await ctx.users.list(tenant);
  if (rows.length === 0) await assertTenantExists(ctx, tenant);
  return rows.map(toUser);
}
