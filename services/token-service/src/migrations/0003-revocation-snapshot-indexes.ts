import type { Knex, Migration } from '@plant/shared/db';

/**
 * The revocation snapshot lists live principals with a version above 1 and recent deletions
 * (principal-repository.ts). One partial index per arm, so the query reads only what it
 * returns; the index it replaces held every principal ever deleted, so its cost grew with history.
 */
export const revocationSnapshotIndexes: Migration = {
  name: '003-revocation-snapshot-indexes',
  async up(knex: Knex) {
    await knex.raw(
      'create index principals_changed on principals (token_version) where token_version > 1 and deleted_at is null',
    );
    await knex.raw(
      'create index principals_deleted on principals (deleted_at) where deleted_at is not null',
    );
    await knex.raw('drop index principals_revoked');
  },
  async down(knex: Knex) {
    await knex.raw(
      'create index principals_revoked on principals (token_version, deleted_at) where token_version > 1 or deleted_at is not null',
    );
    await knex.raw('drop index principals_deleted');
    await knex.raw('drop index principals_changed');
  },
};
