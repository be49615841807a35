import type { Knex, Migration } from '@plant/shared/db';

/**
 * Credential hygiene: a tenant's policy for its service-account secrets (maximum age, what a
 * leak report does, the default grant quota), a per-account quota override, and the leaks
 * reported for an account.
 *
 * - `realm_credential_policies`: one row per realm that changed a default; no row reads as the
 *   defaults (no maximum age, leaks revoke, quota off at 600 a minute), so existing realms and
 *   older replicas need nothing written.
 * - `service_accounts.quota_per_minute` / `quota_mode`: the override, both or neither.
 * - `service_accounts_secret_digest`: a leak report finds a secret by its keyed digest.
 * - `service_account_leaks`: where a secret was found (url, source, when) and what was done;
 *   the secret only as its keyed digest, so a repeated report of a revoked secret is still
 *   recognised. A handful per account (the repository keeps the latest).
 */
export const credentialHygiene: Migration = {
  name: '009-credential-hygiene',
  async up(knex: Knex) {
    await knex.schema.createTable('realm_credential_policies', (t) => {
      t.text('realm').primary().references('name').inTable('realms').onDelete('CASCADE');
      t.integer('secret_max_age_days');
      t.text('leak_response').notNullable().defaultTo('revoke');
      t.integer('quota_per_minute').notNullable().defaultTo(600);
      t.text('quota_mode').notNullable().defaultTo('off');
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.text('updated_by');
    });
    await knex.raw(`alter table realm_credential_policies
      add constraint realm_credential_policies_max_age check (secret_max_age_days between 1 and 730),
      add constraint realm_credential_policies_leak check (leak_response in ('revoke', 'notify')),
      add constraint realm_credential_policies_quota check (quota_per_minute between 1 and 100000),
      add constraint realm_credential_policies_mode check (quota_mode in ('off', 'log', 'enforce'))`);

    await knex.schema.alterTable('service_accounts', (t) => {
      t.integer('quota_per_minute');
      t.text('quota_mode');
    });
    await knex.raw(`alter table service_accounts
      add constraint service_accounts_quota check ((quota_per_minute is null) = (quota_mode is null)),
      add constraint service_accounts_quota_range check (quota_per_minute between 1 and 100000),
      add constraint service_accounts_quota_mode check (quota_mode in ('off', 'log', 'enforce'))`);
    await knex.raw(
      'create index service_accounts_secret_digest on service_accounts (secret_digest) where secret_digest is not null',
    );

    await knex.schema.createTable('service_account_leaks', (t) => {
      t.bigIncrements('id').primary();
      t.text('realm').notNullable();
      t.text('sub').notNullable().references('sub').inTable('principals');
      // HMAC-SHA-256(SECRET_PEPPER, secret): the secret itself is never stored.
      t.text('secret_digest').notNullable();
      t.text('url').notNullable();
      t.text('source').notNullable();
      t.text('reporter').notNullable();
      t.text('action').notNullable();
      t.timestamp('reported_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.raw(
      "alter table service_account_leaks add constraint service_account_leaks_action check (action in ('revoked', 'notified'))",
    );
    await knex.raw(
      'create index service_account_leaks_sub on service_account_leaks (sub, id desc)',
    );
    await knex.raw(
      'create index service_account_leaks_digest on service_account_leaks (secret_digest)',
    );
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('service_account_leaks');
    await knex.raw('drop index if exists service_accounts_secret_digest');
    await knex.raw(`alter table service_accounts
      drop constraint service_accounts_quota,
      drop constraint service_accounts_quota_range,
      drop constraint service_accounts_quota_mode`);
    await knex.schema.alterTable('service_accounts', (t) => {
      t.dropColumns('quota_per_minute', 'quota_mode');
    });
    await knex.schema.dropTableIfExists('realm_credential_policies');
  },
};
