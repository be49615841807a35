import type { Knex } from '@plant/shared/db';

/**
 * Locks the realm row for the rest of the transaction; false when the realm does not exist.
 * Every principal and key change of one realm takes it, so they run one after another (the
 * 25-account cap and the name checks rely on it).
 */
export async function lockRealm(trx: Knex.Transaction, name: string): Promise<boolean> {
  const row = await trx('realms').where({ name }).forUpdate().first('name');
  return row !== undefined;
}
