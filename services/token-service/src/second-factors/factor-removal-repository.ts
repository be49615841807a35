/**
 * Taking a person's factors away, one (`remove`) or all (`reset`): every session of theirs ends
 * with it, in the same transaction (changes/change-effects.ts says what else the change does).
 */
import type { Knex } from '@plant/shared/db';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import { applyPersonChange } from '../people/index.js';
import { type FactorChangeEvent, personEvent } from './factor-change-repository.js';

export interface FactorRemovalRepository {
  /**
   * Removes one factor of the person (false when it is not theirs) and, as `reset`, ends every
   * session of theirs: factor generation and token version bumped, realm sessions deleted.
   */
  remove(
    realm: string,
    sub: string,
    factorId: string,
    event: FactorChangeEvent,
  ): Promise<{ removed: false } | { removed: true; revocation: RevocationEntry | undefined }>;
  /**
   * Removes every factor and recovery code of the person, moves their factor generation and
   * token version and deletes their realm sessions, in one transaction: their portal sessions
   * end at their next request and the realm signs nobody in from an old session (whoever held
   * one may hold the lost authenticator too).
   */
  reset(
    realm: string,
    sub: string,
    event: FactorChangeEvent,
  ): Promise<{ removed: number; revocation: RevocationEntry | undefined }>;
}

/**
 * What taking a factor away does besides, in the caller's transaction: the person's factor
 * generation moves (a portal session or a realm sign-in begun before it ends), their realm
 * sessions go (no silent sign-in from a session that may be the thief's), and their token
 * version is bumped (every replica's portal re-reads them at their next request).
 */
async function takeFactorAway(
  trx: Knex,
  realm: string,
  sub: string,
  kind: 'person.factor-remove' | 'person.factors-reset',
  event: FactorChangeEvent,
): Promise<RevocationEntry | undefined> {
  await trx('users')
    .where({ realm, sub })
    .update({ factor_generation: trx.raw('factor_generation + 1') });
  return applyPersonChange(trx, realm, sub, kind, personEvent(event));
}

export function createFactorRemovalRepository(db: Knex): FactorRemovalRepository {
  return {
    async remove(realm, sub, factorId, event) {
      return db.transaction(async (trx) => {
        const removed = await trx('user_factors').where({ id: factorId, realm, sub }).delete();
        if (removed !== 1) return { removed: false as const };
        // The codes back up the authenticator app: with no factor left they would be a factor of their own.
        const left = await trx('user_factors').where({ realm, sub }).first('id');
        if (!left) await trx('user_recovery_codes').where({ sub }).delete();
        const revocation = await takeFactorAway(trx, realm, sub, 'person.factor-remove', event);
        return { removed: true as const, revocation };
      });
    },
    async reset(realm, sub, event) {
      return db.transaction(async (trx) => {
        const removed = await trx('user_factors').where({ realm, sub }).delete();
        await trx('user_recovery_codes').where({ sub }).delete();
        const counted = { ...event, details: { ...event.details, removed } };
        return {
          removed,
          revocation: await takeFactorAway(trx, realm, sub, 'person.factors-reset', counted),
        };
      });
    },
  };
}
