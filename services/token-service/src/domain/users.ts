import type { Knex, User } from '@plant/shared';
import { findRealm } from '../data-access/realm-repository.js';
import { findUser, listUsers as listUserRows, type UserRow } from '../data-access/user-repository.js';
import { TenantNotFound, UserNotFound } from './errors.js';

function toUser(row: UserRow): User {
  return { id: row.sub, email: row.email, role: row.role, created_at: new Date(row.created_at).toISOString() };
}

// The realm is looked up only when nothing is found (one round trip when there is an answer):
// rows cannot outlive their realm, so only an empty answer can mean an unknown tenant.
export async function listUsers(db: Knex, tenant: string): Promise<User[]> {
  const rows = await listUserRows(db, tenant);
  if (rows.length === 0 && !(await findRealm(db, tenant))) throw new TenantNotFound();
  return rows.map(toUser);
}

export async function getUser(db: Knex, tenant: string, id: string): Promise<User> {
  const row = await findUser(db, tenant, id);
  if (!row) {
    if (!(await findRealm(db, tenant))) throw new TenantNotFound();
    throw new UserNotFound();
  }
  return toUser(row);
}
