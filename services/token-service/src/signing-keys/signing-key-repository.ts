import type { Knex } from '@plant/shared/db';
import { lockRealm } from '../realms/index.js';

export interface SigningKeyRow {
  kid: string;
  realm: string;
  public_jwk: Record<string, unknown>;
  private_key_encrypted: Buffer;
  created_at: Date;
  retired_at: Date | null;
}

export interface NewSigningKey {
  kid: string;
  publicJwk: Record<string, unknown>;
  privateKeyEncrypted: Buffer;
}

/** What the realm's active key must be for a rotation to go ahead, read under the realm's lock. */
export interface RotationGuard {
  /** Rotate only while the active key signs with this algorithm. */
  activeAlg?: string;
  /** Leave the realm as it is when its active key already signs with this algorithm. */
  unlessActiveAlg?: string;
}

export type RotationOutcome =
  | { rotated: true; retired: number }
  /** The guard held the rotation back: the active key as it is. */
  | { rotated: false; active: { kid: string; alg: unknown } | undefined };

export interface SigningKeyRepository {
  findActive(realm: string): Promise<SigningKeyRow | undefined>;
  /** The active key of every realm whose active key was created less than `seconds` ago (a rotation): realm and kid only. */
  activatedWithin(seconds: number): Promise<Array<{ realm: string; kid: string }>>;
  /** The active key and those retired less than `graceSeconds` ago (their tokens may still be live); no private keys. */
  findPublished(
    realm: string,
    graceSeconds: number,
  ): Promise<Array<Omit<SigningKeyRow, 'private_key_encrypted'>>>;
  /** Seconds since the oldest active key of any realm was created (none: undefined), for `/metrics`. */
  oldestActiveAgeSeconds(): Promise<number | undefined>;
  /**
   * Retires the active key and stores `key` as active, in one transaction under the realm's
   * lock, unless `guard` says otherwise; undefined when the realm does not exist.
   */
  rotate(
    realm: string,
    key: NewSigningKey,
    guard?: RotationGuard,
  ): Promise<RotationOutcome | undefined>;
}

/** In the caller's transaction (also the realm's first key). */
export async function insertSigningKey(
  trx: Knex,
  realm: string,
  key: NewSigningKey,
): Promise<void> {
  await trx('signing_keys').insert({
    kid: key.kid,
    realm,
    public_jwk: JSON.stringify(key.publicJwk),
    private_key_encrypted: key.privateKeyEncrypted,
  });
}

export function createSigningKeyRepository(db: Knex): SigningKeyRepository {
  return {
    async findActive(realm) {
      return db('signing_keys').where({ realm }).whereNull('retired_at').first();
    },
    async activatedWithin(seconds) {
      return db('signing_keys')
        .whereNull('retired_at')
        .andWhereRaw('created_at > now() - make_interval(secs => ?)', [seconds])
        .select('realm', 'kid');
    },
    async oldestActiveAgeSeconds() {
      const row = (await db('signing_keys')
        .whereNull('retired_at')
        .first(db.raw('extract(epoch from now() - min(created_at))::float8 as age'))) as
        | { age: number | null }
        | undefined;
      return row?.age ?? undefined;
    },
    async findPublished(realm, graceSeconds) {
      return db('signing_keys')
        .where({ realm })
        .andWhere((q) =>
          q
            .whereNull('retired_at')
            .orWhereRaw('retired_at > now() - make_interval(secs => ?)', [graceSeconds]),
        )
        .orderByRaw('retired_at desc nulls first')
        .select('kid', 'realm', 'public_jwk', 'created_at', 'retired_at');
    },
    rotate(realm, key, guard = {}) {
      return db.transaction(async (trx): Promise<RotationOutcome | undefined> => {
        if (!(await lockRealm(trx, realm))) return undefined;
        const row: { kid: string; public_jwk: Record<string, unknown> } | undefined = await trx(
          'signing_keys',
        )
          .where({ realm })
          .whereNull('retired_at')
          .first('kid', 'public_jwk');
        const active = row === undefined ? undefined : { kid: row.kid, alg: row.public_jwk.alg };
        if (guard.activeAlg !== undefined && active?.alg !== guard.activeAlg)
          return { rotated: false, active };
        if (guard.unlessActiveAlg !== undefined && active?.alg === guard.unlessActiveAlg)
          return { rotated: false, active };
        const retired = await trx('signing_keys')
          .where({ realm })
          .whereNull('retired_at')
          .update({ retired_at: trx.fn.now() });
        await insertSigningKey(trx, realm, key);
        return { rotated: true, retired };
      });
    },
  };
}
