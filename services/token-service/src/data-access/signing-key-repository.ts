import type { Knex } from '@plant/shared';

export interface SigningKeyRow {
  kid: string;
  realm: string;
  public_jwk: Record<string, unknown>;
  private_key_encrypted: Buffer;
  created_at: Date;
  retired_at: Date | null;
}

export async function insertSigningKey(
  trx: Knex,
  row: { kid: string; realm: string; public_jwk: Record<string, unknown>; private_key_encrypted: Buffer },
): Promise<void> {
  await trx('signing_keys').insert({ ...row, public_jwk: JSON.stringify(row.public_jwk) });
}

export async function retireActiveSigningKey(trx: Knex, realm: string): Promise<number> {
  return trx('signing_keys').where({ realm }).whereNull('retired_at').update({ retired_at: trx.fn.now() });
}

export async function findActiveSigningKey(db: Knex, realm: string): Promise<SigningKeyRow | undefined> {
  return db('signing_keys').where({ realm }).whereNull('retired_at').first();
}

/** The active key and those retired less than `graceSeconds` ago (their tokens may still be live). */
export async function findPublishedSigningKeys(db: Knex, realm: string, graceSeconds: number): Promise<SigningKeyRow[]> {
  return db('signing_keys')
    .where({ realm })
    .andWhere((q) => q.whereNull('retired_at').orWhereRaw("retired_at > now() - make_interval(secs => ?)", [graceSeconds]))
    .orderByRaw('retired_at desc nulls first')
    .select('kid', 'realm', 'public_jwk', 'created_at', 'retired_at');
}
