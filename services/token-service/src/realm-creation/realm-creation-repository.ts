import { isUniqueViolation, type Knex } from '@plant/shared/db';
import { insertSigningKey, type NewSigningKey } from '../signing-keys/index.js';
import { insertUser, type NewUser } from '../people/index.js';
import { RealmExists } from '../platform/index.js';

export interface RealmCreationRepository {
  /** The realm, its first signing key and its first user, all or nothing. Throws `RealmExists`, `DuplicateUserEmail`. */
  create(
    name: string,
    firstKey: NewSigningKey,
    firstUser: NewUser,
    policy?: { requireAdminFactor: boolean },
  ): Promise<void>;
}

export function createRealmCreationRepository(db: Knex): RealmCreationRepository {
  return {
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
