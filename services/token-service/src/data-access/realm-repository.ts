import { isUniqueViolation, type Knex } from '@plant/shared';

export interface RealmRow {
  name: string;
  created_at: Date;
}

export class RealmExists extends Error {}

export async function insertRealm(trx: Knex, name: string): Promise<RealmRow> {
  try {
    const [row] = await trx('realms').insert({ name }).returning(['name', 'created_at']);
    return row as RealmRow;
  } catch (err) {
    if (isUniqueViolation(err)) throw new RealmExists(name);
    throw err;
  }
}

export async function findRealm(db: Knex, name: string): Promise<RealmRow | undefined> {
  return db('realms').where({ name }).first(['name', 'created_at']);
}

/** Serialises every principal change of one realm (the 25 cap and name checks rely on it). */
export async function lockRealm(trx: Knex.Transaction, name: string): Promise<boolean> {
  const row = await trx('realms').where({ name }).forUpdate().first('name');
  return row !== undefined;
}
