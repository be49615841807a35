import type { Knex, User } from '@plant/shared';
import { findRealm } from '../data-access/realm-repository.js';
import { findUser, listUsers as listUserRows, type UserRow } from '../data-access/user-repository.js';
import { TenantNotFound, UserNotFound } from './errors.js';

function toUser(row: UserRow): User {
  return { id: row.sub, email: row.email, role: row.role, created_at: new Date(row.created_at).toISOString() };
}

export async function listUsers(db: Knex, tenant: string): Promise<User[]> {
  if (!(await findRealm(db, tenant))) throw new TenantNotFound();
  return (await listUserRows(db, tenant)).map(toUser);
}

export async function getUser(db: Knex, tenant: string, id: string): Promise<User> {
  if (!(await findRealm(db, tenant))) throw new TenantNotFound();
  const row = await findUser(db, tenant, id);
  if (!row) throw new UserNotFound();
  return toUser(row);
}
