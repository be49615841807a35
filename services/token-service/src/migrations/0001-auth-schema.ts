import type { Knex, Migration } from '@plant/shared/db';

/**
 * The identity store. A principal (user or service account) keeps its row after deletion
 * (deleted_at, token_version) so revocation can be answered from Postgres; its credentials
 * (service_accounts / users rows) are removed at once.
 */
export const authSchema: Migration = {
  name: '001-auth-schema',
  // long: a migration: the DDL of the tables it creates, statement after statement.
  async up(knex: Knex) {
    await knex.schema.createTable('realms', (t) => {
      t.text('name').primary();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });

    await knex.schema.createTable('signing_keys', (t) => {
      t.text('kid').primary();
      t.text('realm').notNullable().references('name').inTable('realms').onDelete('CASCADE');
      t.jsonb('public_jwk').notNullable();
      // AES-256-GCM under KEY_ENCRYPTION_KEY: iv (12) || tag (16) || ciphertext of the private JWK.
      t.binary('private_key_encrypted').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('retired_at', { useTz: true });
      t.index(['realm']);
    });
    await knex.raw(
      'create unique index signing_keys_one_active on signing_keys (realm) where retired_at is null',
    );

    await knex.schema.createTable('principals', (t) => {
      t.text('sub').primary();
      t.text('realm').notNullable().references('name').inTable('realms').onDelete('CASCADE');
      t.text('kind').notNullable();
      t.integer('token_version').notNullable().defaultTo(1);
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.text('created_by');
      t.timestamp('deleted_at', { useTz: true });
      t.index(['realm']);
    });
    await knex.raw(
      "alter table principals add constraint principals_kind check (kind in ('user', 'service_account'))",
    );
    await knex.raw(
      'create index principals_revoked on principals (token_version, deleted_at) where token_version > 1 or deleted_at is not null',
    );

    await knex.schema.createTable('service_accounts', (t) => {
      t.text('sub').primary().references('sub').inTable('principals');
      t.text('realm').notNullable();
      t.text('name').notNullable();
      t.text('role').notNullable().defaultTo('View');
      // HMAC-SHA-256(SECRET_PEPPER, secret), hex. The secret itself is never stored.
      t.text('secret_digest').notNullable();
      t.timestamp('last_used_at', { useTz: true });
    });
    await knex.raw(
      "alter table service_accounts add constraint service_accounts_role check (role in ('View', 'Edit'))",
    );
    // Deleted accounts lose this row, so the name becomes free again.
    await knex.raw(
      'create unique index service_accounts_name_unique on service_accounts (realm, lower(name))',
    );

    await knex.schema.createTable('grants', (t) => {
      t.text('sub').notNullable().references('sub').inTable('principals');
      t.text('tag').notNullable();
      t.text('permission').notNullable();
      t.primary(['sub', 'tag', 'permission']);
    });
    await knex.raw(
      "alter table grants add constraint grants_permission check (permission in ('edit'))",
    );

    await knex.schema.createTable('users', (t) => {
      t.text('sub').primary().references('sub').inTable('principals');
      t.text('realm').notNullable();
      t.text('email').notNullable();
      t.text('password_hash').notNullable();
      t.text('role').notNullable();
    });
    await knex.raw(
      "alter table users add constraint users_role check (role in ('View', 'Edit', 'Account Admin'))",
    );
    await knex.raw('create unique index users_email_unique on users (realm, lower(email))');

    // oidc-provider's own artifacts (sessions, interactions, codes, grants), per realm.
    await knex.schema.createTable('oidc_payloads', (t) => {
      t.text('realm').notNullable();
      t.text('model').notNullable();
      t.text('id').notNullable();
      t.jsonb('payload').notNullable();
      t.text('grant_id');
      t.text('user_code');
      t.text('uid');
      t.timestamp('expires_at', { useTz: true });
      t.timestamp('consumed_at', { useTz: true });
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
    await knex.raw('create index oidc_payloads_expires on oidc_payloads (expires_at)');
  },
  async down(knex: Knex) {
    for (const table of [
      'oidc_payloads',
      'users',
      'grants',
      'service_accounts',
      'principals',
      'signing_keys',
      'realms',
    ]) {
      await knex.schema.dropTableIfExists(table);
    }
  },
};
