/**
 * Users of a realm (people who sign in with a password): created by the CLI, read over the
 * internal API (the portal re-reads a session's person when their token version moved), signed
 * out everywhere by an Account Admin. Passwords are kept only as
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

export function toUser(row: UserRow & { token_version?: number }): User {
  return {
    id: row.sub,
    email: row.email,
    role: row.role,
    created_at: new Date(row.created_at).toISOString(),
    token_version: row.token_version ?? 0,
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

/**
 * Signs the person out everywhere: version bumped with their realm sessions deleted (one
 * transaction), then published, so every replica refuses their older tokens and portal sessions.
 */
export async function signOutUserEverywhere(
  ctx: Pick<IdentityContext, 'users' | 'realms' | 'publisher'>,
  tenant: string,
  id: string,
): Promise<User> {
  const entry = await ctx.users.signOutEverywhere(tenant, id);
  if (entry === undefined) {
    await assertTenantExists(ctx, tenant);
    throw new UserNotFound();
  }
  await ctx.publisher.publish(entry);
  return getUser(ctx, tenant, id);
}

export async function listUsers(
  ctx: Pick<IdentityContext, 'users' | 'realms'>,
  tenant: string,
): Promise<User[]> {
  const rows = await ctx.users.list(tenant);
  if (rows.length === 0) await assertTenantExists(ctx, tenant);
  return rows.map(toUser);
}
