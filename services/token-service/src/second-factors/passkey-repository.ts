/**
 * A person's passkeys (WebAuthn credentials): enrolment, the ones a sign-in may use, the one a
 * discoverable sign-in names, and each use's signature counter.
 */
import { isUniqueViolation, type Knex } from '@plant/shared/db';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import { applyPersonChange } from '../people/index.js';
import { DuplicateFactor } from '../platform/index.js';
import {
  assertGeneration,
  type FactorChangeEvent,
  personEvent,
} from './factor-change-repository.js';

export interface PasskeyRow {
  id: string;
  sub: string;
  credentialId: string;
  publicKey: Buffer;
  signCount: number;
  transports: string[] | null;
}

export interface NewPasskey {
  id: string;
  label: string;
  credentialId: string;
  publicKey: Buffer;
  signCount: number;
  transports: string[];
  aaguid: string;
  backedUp: boolean;
  /** As NewTotp's. */
  generation?: number;
}

export interface PasskeyRepository {
  /** As `addTotp`: the token version bumped with it. Throws `DuplicateFactor`. */
  addPasskey(
    realm: string,
    sub: string,
    passkey: NewPasskey,
    event: FactorChangeEvent,
  ): Promise<RevocationEntry | undefined>;
  passkeysOf(realm: string, sub: string): Promise<PasskeyRow[]>;
  /** The passkey a discoverable sign-in names, in this realm. */
  passkeyByCredentialId(realm: string, credentialId: string): Promise<PasskeyRow | undefined>;
  /** Records a passkey's use; false when its counter went backwards meanwhile (a cloned authenticator, or a race). */
  usePasskey(factorId: string, previous: number, next: number): Promise<boolean>;
}

const toPasskey = (row: Record<string, unknown>): PasskeyRow => ({
  id: row.id as string,
  sub: row.sub as string,
  credentialId: row.credential_id as string,
  publicKey: row.public_key as Buffer,
  signCount: Number(row.sign_count),
  transports: (row.transports as string[] | null) ?? null,
});

export function createPasskeyRepository(db: Knex): PasskeyRepository {
  return {
    async addPasskey(realm, sub, passkey, event) {
      return db.transaction(async (trx) => {
        await assertGeneration(trx, realm, sub, passkey.generation);
        try {
          await trx('user_factors').insert({
            id: passkey.id,
            sub,
            realm,
            kind: 'passkey',
            label: passkey.label,
            credential_id: passkey.credentialId,
            public_key: passkey.publicKey,
            sign_count: passkey.signCount,
            transports: passkey.transports,
            aaguid: passkey.aaguid,
            backed_up: passkey.backedUp,
            last_used_at: trx.fn.now(),
          });
        } catch (err) {
          if (isUniqueViolation(err)) throw new DuplicateFactor();
          throw err;
        }
        return applyPersonChange(trx, realm, sub, 'person.factor-enrol', personEvent(event));
      });
    },
    async passkeysOf(realm, sub) {
      const rows = await db('user_factors')
        .where({ realm, sub, kind: 'passkey' })
        .select('id', 'sub', 'credential_id', 'public_key', 'sign_count', 'transports');
      return rows.map(toPasskey);
    },
    async passkeyByCredentialId(realm, credentialId) {
      const row = await db('user_factors')
        .where({ realm, credential_id: credentialId, kind: 'passkey' })
        .first('id', 'sub', 'credential_id', 'public_key', 'sign_count', 'transports');
      return row ? toPasskey(row) : undefined;
    },
    async usePasskey(factorId, previous, next) {
      const updated = await db('user_factors')
        .where({ id: factorId, sign_count: previous })
        .update({ sign_count: next, last_used_at: db.fn.now() });
      return updated === 1;
    },
  };
}
