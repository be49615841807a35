import type { Knex } from '@plant/shared/db';

/** A credential that issued a token, for its last-used time. */
export interface CredentialUse {
  sub: string;
  kind: 'secret' | 'key' | 'trust';
  id: string;
}

export interface CredentialUsageRepository {
  /** Sets the accounts' and the credentials' last_used_at, at most once a minute each whichever replica asks. */
  touchLastUsed(uses: CredentialUse[]): Promise<void>;
}

const stale = (column: string) => (q: Knex.QueryBuilder) =>
  q.whereNull(column).orWhereRaw(`?? < now() - interval '1 minute'`, [column]);

export function createCredentialUsageRepository(db: Knex): CredentialUsageRepository {
  return {
    async touchLastUsed(uses) {
      if (uses.length === 0) return;
      const now = db.fn.now();
      const subs = [...new Set(uses.map((u) => u.sub))];
      const pairs = (kind: CredentialUse['kind']) =>
        uses.flatMap((u) => (u.kind === kind ? [[u.sub, u.id]] : []));
      await db('service_accounts')
        .whereIn('sub', subs)
        .andWhere(stale('last_used_at'))
        .update({ last_used_at: now });
      for (const [table, kind] of [
        ['service_account_secrets', 'secret'],
        ['service_account_keys', 'key'],
        ['service_account_trusts', 'trust'],
      ] as const) {
        const used = pairs(kind);
        if (used.length > 0)
          await db(table)
            .whereIn(['sub', 'id'], used)
            .andWhere(stale('last_used_at'))
            .update({ last_used_at: now });
      }
    },
  };
}
