import type { Knex, Migration } from '@plant/shared/db';

/**
 * Each service account's and each person's revision: the validator behind account-admin's
 * `ETag` / `If-Match` (docs/decisions/0043-etag-from-revisions.md). One int64 per row, counted
 * up in the transaction of every change (a service account's through `changeAccount`: its
 * settings, credentials, state; a person's role and status through the user repository's
 * `change`), so a change conditional on a revision is decided under the lock that change takes.
 * Expand-only: the previous release neither reads nor writes it (the default serves its inserts).
 */
export const resourceRevisions: Migration = {
  name: '015-resource-revisions',
  async up(knex: Knex) {
    await knex.raw('alter table service_accounts add column revision bigint not null default 1');
    await knex.raw('alter table users add column revision bigint not null default 1');
  },
  async down(knex: Knex) {
    await knex.raw('alter table users drop column revision');
    await knex.raw('alter table service_accounts drop column revision');
  },
};
