import type { Knex, Migration } from '@plant/shared/db';

/**
 * Credentials beyond the secret (keys, trusted workloads, disabling). Numbered 005: 004 is the revocation change feed,
 * built at the same time on another branch. public keys (`private_key_jwt`, RFC 7523) and
 * trusted workloads (federation), a secret that may be removed, and disabling.
 *
 * - `secret_digest` may be null (an account that uses only keys or trusts); its creation time
 *   is kept beside it (existing secrets date from their account's creation), and a check ties
 *   the two so one cannot be set without the other.
 * - `credentials_revision` grows with every credential change, including additions that
 *   revoke nothing (a new key): the token service's credential cache compares it, so a cached
 *   row never hides a key or trust added since.
 * - Keys and trusts belong to the principal (like grants) and go with its credentials when the
 *   account is deleted; their rows hold public material and identifiers only.
 */
export const serviceAccountCredentials: Migration = {
  name: '005-service-account-credentials',
  async up(knex: Knex) {
    await knex.raw('alter table service_accounts alter column secret_digest drop not null');
    await knex.schema.alterTable('service_accounts', (t) => {
      t.timestamp('secret_created_at', { useTz: true });
      t.timestamp('secret_last_used_at', { useTz: true });
      t.timestamp('disabled_at', { useTz: true });
      t.integer('credentials_revision').notNullable().defaultTo(1);
    });
    await knex.raw(
      'update service_accounts sa set secret_created_at = p.created_at from principals p where p.sub = sa.sub',
    );
    await knex.raw(
      'alter table service_accounts add constraint service_accounts_secret_created check ((secret_digest is null) = (secret_created_at is null))',
    );

    await knex.schema.createTable('service_account_keys', (t) => {
      t.text('sub').notNullable().references('sub').inTable('principals');
      // The JWK's own kid, or its RFC 7638 thumbprint: what a client puts in the assertion's header.
      t.text('id').notNullable();
      t.text('realm').notNullable();
      t.text('alg').notNullable();
      t.jsonb('public_jwk').notNullable();
      t.text('thumbprint').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.text('created_by');
      t.timestamp('last_used_at', { useTz: true });
      t.primary(['sub', 'id']);
    });
    await knex.raw(
      'create unique index service_account_keys_thumbprint on service_account_keys (sub, thumbprint)',
    );

    await knex.schema.createTable('service_account_trusts', (t) => {
      t.text('sub').notNullable().references('sub').inTable('principals');
      t.text('id').notNullable();
      t.text('realm').notNullable();
      t.text('issuer').notNullable();
      t.text('subject').notNullable();
      t.text('audience').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.text('created_by');
      t.timestamp('last_used_at', { useTz: true });
      t.primary(['sub', 'id']);
    });
    await knex.raw(
      'create unique index service_account_trusts_unique on service_account_trusts (sub, issuer, subject, audience)',
    );
    // The per-tenant cap counts a realm's distinct issuers.
    await knex.raw(
      'create index service_account_trusts_realm_issuer on service_account_trusts (realm, issuer)',
    );
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('service_account_trusts');
    await knex.schema.dropTableIfExists('service_account_keys');
    await knex.raw('alter table service_accounts drop constraint service_accounts_secret_created');
    await knex.schema.alterTable('service_accounts', (t) => {
      t.dropColumns(
        'secret_created_at',
        'secret_last_used_at',
        'disabled_at',
        'credentials_revision',
      );
    });
    // Accounts left without a secret cannot go back to a schema that requires one.
    await knex('service_accounts').whereNull('secret_digest').delete();
    await knex.raw('alter table service_accounts alter column secret_digest set not null');
  },
};
