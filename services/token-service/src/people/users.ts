/**
 * People of a realm: created by the CLI or by accepting an invitation (invitations.ts), read
 * and managed over the internal API (account-admin's People page; the portal re-reads a
 * session's person when their token version moved), signed out everywhere by an Account Admin.
 * Passwords are kept only as
 * their hash (passwords.ts); signing in is authenticate-user.ts.
 *
 * Every change of a person (role, disable, enable, remove) runs under the realm lock with the
 * last-admin rule: a realm always keeps an active Account Admin, however many admins act at
 * once. Each change bumps the person's token version in its transaction and publishes it after
 * commit, as service-account changes do, so every replica refuses their older tokens and the
 * portal re-reads the person at their next request.
 */
import { randomUUID } from 'node:crypto';
import type { User, UserChange, UserRole } from '@plant/shared/token-service-client';
import type { UserChange as StoredChange, UserRow } from './user-repository.js';
import {
  DuplicateUserEmail,
  LastAccountAdmin,
  TenantNotFound,
  UserEmailTaken,
  UserNotFound,
  type IdentityContext,
} from '../platform/index.js';
import { hashPassword } from '../passwords/index.js';
import { assertTenantExists } from '../realms/index.js';

/** A user as the create commands answer it. */
export interface CreatedUser {
  id: string;
  email: string;
  role: UserRole;
}

const iso = (value: Date | null) => (value === null ? null : new Date(value).toISOString());

export function toUser(row: UserRow): User {
  return {
    id: row.sub,
    email: row.email,
    role: row.role,
    status: row.disabled_at === null ? 'active' : 'disabled',
    created_at: new Date(row.created_at).toISOString(),
    last_sign_in_at: iso(row.last_sign_in_at),
    factors: {
      passkeys: Number(row.passkeys),
      totp: row.totp === true,
      recovery_codes_left: Number(row.recovery_codes_left),
    },
    token_version: Number(row.token_version),
    factor_generation: Number(row.factor_generation),
    factor_required: row.role === 'Account Admin' && row.require_admin_factor === true,
    revision: Number(row.revision),
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

async function changeUser(
  ctx: Pick<IdentityContext, 'users' | 'realms' | 'publisher'>,
  tenant: string,
  id: string,
  change: StoredChange,
): Promise<void> {
  const outcome = await ctx.users.change(tenant, id, change);
  if (outcome === undefined) {
    await assertTenantExists(ctx, tenant);
    throw new UserNotFound();
  }
  if (outcome === 'last-admin') throw new LastAccountAdmin();
  await ctx.publisher.publish(outcome);
}

/** A new role or status (exactly one, as the route checks); the person as it is now. */
export async function updateUser(
  ctx: Pick<IdentityContext, 'users' | 'realms' | 'publisher'>,
  tenant: string,
  id: string,
  change: UserChange,
): Promise<User> {
  if (change.role !== undefined)
    await changeUser(ctx, tenant, id, { kind: 'role', role: change.role });
  else if (change.status !== undefined)
    await changeUser(ctx, tenant, id, {
      kind: change.status === 'disabled' ? 'disable' : 'enable',
    });
  return getUser(ctx, tenant, id);
}

/** The person goes with their factors and recovery codes; the principal stays, deleted, so their tokens are refused. */
export async function removeUser(
  ctx: Pick<IdentityContext, 'users' | 'realms' | 'publisher'>,
  tenant: string,
  id: string,
): Promise<void> {
  await changeUser(ctx, tenant, id, { kind: 'remove' });
}
