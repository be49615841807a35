import { isUniqueViolation, type Knex } from '@plant/shared/db';
import { insertSigningKey, type NewSigningKey } from '../signing-keys/index.js';
import { insertUser, type NewUser } from '../people/index.js';
import { RealmExists } from '../platform/index.js';

export interface RealmRow {
  name: string;
  created_at: Date;
}

export interface RealmRepository {
  find(name: string): Promise<RealmRow | undefined>;
  /** Every realm's name, in byte order (the same in every locale, so the answer and its ETag are stable). */
  listNames(): Promise<string[]>;
  /** The realm, its first signing key and its first user, all or nothing. Throws `RealmExists`, `DuplicateUserEmail`. */
  create(
    name: string,
    firstKey: NewSigningKey,
    firstUser: NewUser,
    policy?: { requireAdminFactor: boolean },
  ): Promise<void>;
}

export function createRealmRepository(db: Knex): RealmRepository {
  return {
    async find(name) {
      return db('realms').where({ name }).first(['name', 'created_at']);
    },
    async listNames() {
      const rows: Array<{ name: string }> = await db('realms')
        .orderByRaw('name collate "C"')
        .select('name');
      return rows.map((row) => row.name);
    },
    async create(name, firstKey, firstUser, policy) {
      await db.transaction(async (trx) => {
        try {
          await trx('realms').insert({
            name,
            ...(policy && { require_admin_factor: policy.requireAdminFactor }),
          });
        } catch (err) {
          if (isUniqueViolation(err)) throw new RealmExists(name);
          throw err;
        }
        await insertSigningKey(trx, name, firstKey);
        await insertUser(trx, name, firstUser);
      });
    },
  };
}
