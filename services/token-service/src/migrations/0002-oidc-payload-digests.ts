import type { Knex, Migration } from '@plant/shared/db';

/**
 * oidc-provider's artifacts keyed by SHA-256 digests of their ids, uids, user codes and grant
 * ids instead of the values, which are bearer values (oidc-payload-repository.ts). The columns
 * get new names, so a replica still running the old code fails on them instead of writing a
 * value in clear during a rollout.
 *
 * Existing rows are deleted, not converted: they are short-lived (interactions, codes, the token
 * service's own sessions) and their ids may already sit in clear in backups and WAL, where a
 * converted row would keep them valid. Users signed in to the token service sign in again at
 * their next portal sign-in; portal sessions live in Redis and are not touched.
 */
export const oidcPayloadDigests: Migration = {
  name: '002-oidc-payload-digests',
  async up(knex: Knex) {
    // No replica may write a row between the delete and the new NOT NULL column.
    await knex.raw('lock table oidc_payloads in access exclusive mode');
    await knex('oidc_payloads').delete();
    await knex.schema.alterTable('oidc_payloads', (t) => {
      t.dropPrimary();
      t.dropColumns('id', 'grant_id', 'user_code', 'uid');
    });
    await knex.schema.alterTable('oidc_payloads', (t) => {
      t.binary('id_digest').notNullable();
      t.binary('grant_id_digest');
      t.binary('user_code_digest');
      t.binary('uid_digest');
      t.primary(['realm', 'model', 'id_digest']);
    });
    await knex.raw(
      'create index oidc_payloads_grant on oidc_payloads (realm, grant_id_digest) where grant_id_digest is not null',
    );
    await knex.raw(
      'create index oidc_payloads_uid on oidc_payloads (realm, model, uid_digest) where uid_digest is not null',
    );
    await knex.raw(
      'create index oidc_payloads_user_code on oidc_payloads (realm, model, user_code_digest) where user_code_digest is not null',
    );
  },
  async down(knex: Knex) {
    await knex.raw('lock table oidc_payloads in access exclusive mode');
    await knex('oidc_payloads').delete();
    await knex.schema.alterTable('oidc_payloads', (t) => {
      t.dropPrimary();
      t.dropColumns('id_digest', 'grant_id_digest', 'user_code_digest', 'uid_digest');
    });
    await knex.schema.alterTable('oidc_payloads', (t) => {
      t.text('id').notNullable();
      t.text('grant_id');
      t.text('user_code');
      t.text('uid');
      t.primary(['realm', 'model', 'id']);
    });
    await knex.raw(
      'create index oidc_payloads_grant on oidc_payloads (realm, grant_id) where grant_id is not null',
    );
    await knex.raw(
      'create index oidc_payloads_uid on oidc_payloads (realm, model, uid) where uid is not null',
    );
    await knex.raw(
      'create index oidc_payloads_user_code on oidc_payloads (realm, model, user_code) where user_code is not null',
    );
  },
};
