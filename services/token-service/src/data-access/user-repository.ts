import { isUniqueViolation, type Knex, type UserRole } from '@plant/shared';

export interface UserRow {
  sub: string;
  realm: string;
  email: string;
  role: UserRole;
  created_at: Date;
}

export interface UserCredentialRow extends UserRow {
  password_hash: string;
  token_version: number;
}

export class DuplicateUserEmail extends Error {}

function selectUsers(db: Knex) {
  return db('users as u').join('principals as p', 'p.sub', 'u.sub').whereNull('p.deleted_at').select('u.sub', 'u.realm', 'u.email', 'u.role', 'p.created_at');
}

export async function insertUser(trx: Knex, row: { sub: string; realm: string; email: string; role: UserRole; password_hash: string }): Promise<void> {
  try {
    await trx('users').insert(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateUserEmail(row.email);
    throw err;
  }
}

export async function listUsers(db: Knex, realm: string): Promise<UserRow[]> {
  return selectUsers(db).where('u.realm', realm).orderByRaw('lower(u.email)');
}

export async function findUser(db: Knex, realm: string, sub: string): Promise<(UserRow & { token_version: number }) | undefined> {
  return selectUsers(db).where({ 'u.realm': realm, 'u.sub': sub }).first('p.token_version');
}

export async function findUserCredentialByEmail(db: Knex, realm: string, email: string): Promise<UserCredentialRow | undefined> {
  return selectUsers(db)
    .where('u.realm', realm)
    .whereRaw('lower(u.email) = lower(?)', [email])
    .first('u.password_hash', 'p.token_version');
}
