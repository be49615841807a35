import { isUniqueViolation, type Knex, type UserRole } from '@plant/shared';
import { insertPrincipal } from './principal-repository.js';
import { lockRealm } from './realm-lock.js';

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

export interface NewUser {
  sub: string;
  email: string;
  role: UserRole;
  passwordHash: string;
  createdBy: string | null;
}

export class DuplicateUserEmail extends Error {}

export interface UserRepository {
  /** The realm's live users, by email. */
  list(realm: string): Promise<UserRow[]>;
  find(realm: string, sub: string): Promise<(UserRow & { token_version: number }) | undefined>;
  findCredentialByEmail(realm: string, email: string): Promise<UserCredentialRow | undefined>;
  /** Adds the user to a locked realm; false when the realm does not exist. Throws `DuplicateUserEmail`. */
  create(realm: string, user: NewUser): Promise<boolean>;
}

/** The principal and its user row, in the caller's transaction (also the realm's first user). */
export async function insertUser(trx: Knex, realm: string, user: NewUser): Promise<void> {
  await insertPrincipal(trx, { sub: user.sub, realm, kind: 'user', created_by: user.createdBy });
  try {
    await trx('users').insert({ sub: user.sub, realm, email: user.email, role: user.role, password_hash: user.passwordHash });
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateUserEmail(user.email);
    throw err;
  }
}

export function createUserRepository(db: Knex): UserRepository {
  const selectUsers = () =>
    db('users as u').join('principals as p', 'p.sub', 'u.sub').whereNull('p.deleted_at').select('u.sub', 'u.realm', 'u.email', 'u.role', 'p.created_at');
  return {
    async list(realm) {
      return selectUsers().where('u.realm', realm).orderByRaw('lower(u.email)');
    },
    async find(realm, sub) {
      return selectUsers().where({ 'u.realm': realm, 'u.sub': sub }).first('p.token_version');
    },
    async findCredentialByEmail(realm, email) {
      return selectUsers().where('u.realm', realm).whereRaw('lower(u.email) = lower(?)', [email]).first('u.password_hash', 'p.token_version');
    },
    create(realm, user) {
      return db.transaction(async (trx) => {
        if (!(await lockRealm(trx, realm))) return false;
        await insertUser(trx, realm, user);
        return true;
      });
    },
  };
}
