import { nameKey } from '@plant/shared/api';
import type { Knex, Migration } from '@plant/shared/db';

const BATCH = 500;

/**
 * Service-account names are unique by what a person sees, not only by lower(name): `name_key`
 * is `nameKey(name)` (case-folded, NFKC, Unicode TR39 confusable skeleton; shared's
 * name-text.ts), written by the repository on every create and unique per realm, so `Аdmin`
 * (Cyrillic А) or `Ａｄｍｉｎ` cannot join `Admin`. The lower(name) index stays: it is what
 * keeps rows without a key apart.
 *
 * Existing rows are backfilled in each realm from the oldest account on. Accounts made before
 * this rule may already look alike: the oldest keeps the key, each later one keeps its row,
 * name and credentials with `name_key` null (Postgres' unique index lets nulls repeat), so
 * nothing is lost or renamed behind the operator's back, and any new account that looks like
 * either one is refused. `select realm, name from service_accounts where name_key is null`
 * lists them for a person to rename or remove. Rows written by a replica of the previous
 * release during a rolling update get no key either (that code does not know the column), and
 * show up in the same query. A change of `nameKey`'s algorithm (or of its confusables data)
 * needs a migration like this one to recompute the keys.
 */
export const serviceAccountNameKeys: Migration = {
  name: '007-service-account-name-keys',
  async up(knex: Knex) {
    await knex.schema.alterTable('service_accounts', (t) => {
      t.text('name_key');
    });
    const rows: Array<{ sub: string; realm: string; name: string }> = await knex(
      'service_accounts as sa',
    )
      .join('principals as p', 'p.sub', 'sa.sub')
      .orderBy([{ column: 'sa.realm' }, { column: 'p.created_at' }, { column: 'sa.sub' }])
      .select('sa.sub', 'sa.realm', 'sa.name');
    const taken = new Set<string>();
    const keyed: Array<{ sub: string; key: string }> = [];
    for (const row of rows) {
      const key = nameKey(row.name);
      const realmKey = JSON.stringify([row.realm, key]);
      if (taken.has(realmKey)) continue;
      taken.add(realmKey);
      keyed.push({ sub: row.sub, key });
    }
    for (let i = 0; i < keyed.length; i += BATCH) {
      const batch = keyed.slice(i, i + BATCH);
      await knex.raw(
        `update service_accounts as sa set name_key = v.key from (values ${batch.map(() => '(?, ?)').join(', ')}) as v(sub, key) where sa.sub = v.sub`,
        batch.flatMap((row) => [row.sub, row.key]),
      );
    }
    await knex.raw(
      'create unique index service_accounts_name_key_unique on service_accounts (realm, name_key)',
    );
  },
  async down(knex: Knex) {
    await knex.raw('drop index if exists service_accounts_name_key_unique');
    await knex.schema.alterTable('service_accounts', (t) => {
      t.dropColumn('name_key');
    });
  },
};
