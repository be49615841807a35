import type { Knex, RevocationEntry } from '@plant/shared';

export type PrincipalKind = 'user' | 'service_account';

export interface PrincipalRepository {
  /**
   * Every live principal with version above 1, and every principal deleted less than
   * `deletedWithinSeconds` ago. An older deletion is left out whatever its version, so
   * create/delete churn cannot grow the snapshot: the result is bounded by live data.
   */
  revocationSnapshot(deletedWithinSeconds: number): Promise<RevocationEntry[]>;
  findRevocationEntry(realm: string, sub: string): Promise<RevocationEntry | undefined>;
}

/** In the caller's transaction (the user and service-account repositories). */
export async function insertPrincipal(trx: Knex, row: { sub: string; realm: string; kind: PrincipalKind; created_by: string | null }): Promise<void> {
  await trx('principals').insert(row);
}

/** Bumps the token version (and marks deletion) in the caller's transaction; the new entry, undefined when there is no live principal. */
export async function bumpTokenVersion(trx: Knex, realm: string, sub: string, { deleted = false } = {}): Promise<RevocationEntry | undefined> {
  const update: Record<string, unknown> = { token_version: trx.raw('token_version + 1') };
  if (deleted) update.deleted_at = trx.fn.now();
  const [row] = await trx('principals')
    .where({ realm, sub })
    .whereNull('deleted_at')
    .update(update)
    .returning(['realm', 'sub', 'token_version', 'deleted_at']);
  return row === undefined ? undefined : toEntry(row);
}

/** The principal's current entry (nothing bumped), in the caller's transaction; undefined when it is not live. */
export async function findLiveEntry(trx: Knex, realm: string, sub: string): Promise<RevocationEntry | undefined> {
  const row = await trx('principals').where({ realm, sub }).whereNull('deleted_at').first('realm', 'sub', 'token_version', 'deleted_at');
  return row === undefined ? undefined : toEntry(row);
}

function toEntry(row: { realm: string; sub: string; token_version: number; deleted_at: Date | null }): RevocationEntry {
  return { tenant: row.realm, sub: row.sub, version: row.token_version, deleted: row.deleted_at !== null };
}

export function createPrincipalRepository(db: Knex): PrincipalRepository {
  return {
    async revocationSnapshot(deletedWithinSeconds) {
      // Each arm has its partial index (principals_changed, principals_deleted), so the scan
      // reads only what it returns, never the deleted principals of the past.
      const rows = await db('principals')
        .where((q) => q.where('token_version', '>', 1).whereNull('deleted_at'))
        .orWhereRaw('deleted_at > now() - make_interval(secs => ?)', [deletedWithinSeconds])
        .orderBy(['realm', 'sub'])
        .select('realm', 'sub', 'token_version', 'deleted_at');
      return rows.map(toEntry);
    },
    async findRevocationEntry(realm, sub) {
      const row = await db('principals').where({ realm, sub }).first('realm', 'sub', 'token_version', 'deleted_at');
      return row === undefined ? undefined : toEntry(row);
    },
  };
}
