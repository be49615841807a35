/**
 * A person's authenticator app (TOTP) and their recovery codes: the sealed secret, the last time
 * step accepted, enrolment with a fresh set of codes, and spending a code once.
 */
import { isUniqueViolation, type Knex } from '@plant/shared/db';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import { applyPersonChange } from '../people/index.js';
import { DuplicateFactor } from '../platform/index.js';
import {
  assertGeneration,
  type FactorAuditEvent,
  type FactorChangeEvent,
  insertEvent,
  personEvent,
} from './factor-change-repository.js';

export interface TotpRow {
  id: string;
  sealed: Buffer;
  lastStep: number | null;
}

export interface NewTotp {
  id: string;
  label: string;
  sealed: Buffer;
  /** The step of the code that confirmed it: that code is spent. */
  step: number;
  /** The factor generation the sign-in began at: refused (`StaleFactorGeneration`) once it moved. */
  generation?: number;
}

export interface TotpRepository {
  totpOf(realm: string, sub: string): Promise<TotpRow | undefined>;
  /**
   * Spends a TOTP time step: true when `step` is later than the last one accepted (one
   * conditional update, so two requests with one code cannot both pass).
   */
  claimTotpStep(realm: string, sub: string, factorId: string, step: number): Promise<boolean>;
  /**
   * One TOTP authenticator and a fresh set of recovery codes, in one transaction, with the
   * person's token version bumped (every session of theirs re-reads them and now needs the
   * factor for sensitive actions). Throws `DuplicateFactor`.
   */
  addTotp(
    realm: string,
    sub: string,
    totp: NewTotp,
    recoveryDigests: string[],
    event: FactorChangeEvent,
  ): Promise<RevocationEntry | undefined>;
  /** Replaces the person's recovery codes (the old ones stop working). */
  replaceRecoveryCodes(
    realm: string,
    sub: string,
    digests: string[],
    event: FactorChangeEvent,
  ): Promise<void>;
  /** Spends a recovery code: true once per code, whoever asks at the same moment. */
  useRecoveryCode(
    realm: string,
    sub: string,
    digest: string,
    event: FactorAuditEvent,
  ): Promise<boolean>;
}

async function insertRecoveryCodes(trx: Knex, sub: string, digests: string[]): Promise<void> {
  await trx('user_recovery_codes').where({ sub }).delete();
  await trx('user_recovery_codes').insert(digests.map((digest) => ({ sub, digest })));
}

export function createTotpRepository(db: Knex): TotpRepository {
  return {
    async totpOf(realm, sub) {
      const row = await db('user_factors')
        .where({ realm, sub, kind: 'totp' })
        .first('id', 'totp_secret_encrypted', 'totp_last_step');
      if (!row) return undefined;
      return {
        id: row.id,
        sealed: row.totp_secret_encrypted,
        lastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
      };
    },
    async claimTotpStep(realm, sub, factorId, step) {
      const updated = await db('user_factors')
        .where({ id: factorId, realm, sub, kind: 'totp' })
        .andWhere((q) => q.whereNull('totp_last_step').orWhere('totp_last_step', '<', step))
        .update({ totp_last_step: step, last_used_at: db.fn.now() });
      return updated === 1;
    },
    async addTotp(realm, sub, totp, recoveryDigests, event) {
      return db.transaction(async (trx) => {
        await assertGeneration(trx, realm, sub, totp.generation);
        try {
          await trx('user_factors').insert({
            id: totp.id,
            sub,
            realm,
            kind: 'totp',
            label: totp.label,
            totp_secret_encrypted: totp.sealed,
            totp_last_step: totp.step,
            last_used_at: trx.fn.now(),
          });
        } catch (err) {
          if (isUniqueViolation(err)) throw new DuplicateFactor();
          throw err;
        }
        await insertRecoveryCodes(trx, sub, recoveryDigests);
        return applyPersonChange(trx, realm, sub, 'person.factor-enrol', personEvent(event));
      });
    },
    async replaceRecoveryCodes(realm, sub, digests, event) {
      await db.transaction(async (trx) => {
        await insertRecoveryCodes(trx, sub, digests);
        await applyPersonChange(trx, realm, sub, 'person.recovery-codes-new', personEvent(event));
      });
    },
    async useRecoveryCode(realm, sub, digest, event) {
      return db.transaction(async (trx) => {
        const used = await trx('user_recovery_codes')
          .where({ sub, digest })
          .whereNull('used_at')
          .update({ used_at: trx.fn.now() });
        if (used !== 1) return false;
        await insertEvent(trx, realm, event);
        return true;
      });
    },
  };
}
