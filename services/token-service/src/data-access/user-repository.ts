import { isUniqueViolation, type Knex } from '@plant/shared/db';
import type { RevocationEntry, UserRole } from '@plant/shared/token-service-client';
import { bumpTokenVersion, insertPrincipal } from './principal-repository.js';
import { lockRealm } from './realm-lock.js';

export interface UserRow {
  sub: string;
  realm: string;
  email: string;
  role: UserRole;
  created_at: Date;
}

/** An email as the store matches it (`lower()` in Postgres), and the live user it names, if any. */
export interface SignInCredentialRow {
  email_key: string;
  sub: string | null;
  password_hash: string | null;
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
  /**
   * The email's key as Postgres matches it, whether or not a user has it: every spelling that
   * signs in to one account (any case, any character `lower()` folds) has one key, so a
   * failure budget kept by it cannot be multiplied by respelling the email.
   */
  findSignInCredential(realm: string, email: string): Promise<SignInCredentialRow>;
  /** Adds the user to a locked realm; false when the realm does not exist. Throws `DuplicateUserEmail`. */
  create(realm: string, user: NewUser): Promise<boolean>;
  /**
   * In one transaction: bumps the live user's token version (the revocation feed records it)
   * and deletes the realm's oidc-provider `Session` artifacts of that account, so the realm's
   * sign-in page does not sign them straight back in. The new entry, undefined when there is no
   * such live user.
   */
  signOutEverywhere(realm: string, sub: string): Promise<RevocationEntry | undefined>;
}

/** The principal and its user row, in the caller's transaction (also the realm's first user). */
export async function insertUser(trx: Knex, realm: string, user: NewUser): Promise<void> {
  await insertPrincipal(trx, { sub: user.sub, realm, kind: 'user', created_by: user.createdBy });
  try {
    await trx('users').insert({
      sub: user.sub,
      realm,
      email: user.email,
      role: user.role,
      password_hash: user.passwordHash,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateUserEmail(user.email);
    throw err;
  }
}

export function createUserRepository(db: Knex): UserRepository {
  const selectUsers = () =>
    db('users as u')
      .join('principals as p', 'p.sub', 'u.sub')
      .whereNull('p.deleted_at')
      .select('u.sub', 'u.realm', 'u.email', 'u.role', 'p.created_at', 'p.token_version');
  return {
    async list(realm) {
      return selectUsers().where('u.realm', realm).orderByRaw('lower(u.email)');
    },
    async find(realm, sub) {
      return selectUsers().where({ 'u.realm': realm, 'u.sub': sub }).first();
    },
    async findSignInCredential(realm, email) {
      const { rows } = await db.raw<{ rows: SignInCredentialRow[] }>(
        `select lower(e.email) as email_key, u.sub, u.password_hash
           from (select ?::text as email) e
           left join users u on u.realm = ? and lower(u.email) = lower(e.email)
             and exists (select 1 from principals p where p.sub = u.sub and p.deleted_at is null)`,
        [email, realm],
      );
      return rows[0]!;
    },
    signOutEverywhere(realm, sub) {
      return db.transaction(async (trx) => {
        const user = await trx('users').where({ realm, sub }).first('sub');
        if (user === undefined) return undefined;
        const entry = await bumpTokenVersion(trx, realm, sub);
        if (entry === undefined) return undefined;
        await trx('oidc_payloads')
          .where({ realm, model: 'Session' })
          .whereRaw("payload->>'accountId' = ?", [sub])
          .del();
        return entry;
      });
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
