import type { Knex, Migration } from '@plant/shared/db';

/**
 * The people who hold the keys: their state, invitations, second factors and the realm-side
 * trail of what happened to them.
 *
 * - `users.disabled_at` (a disabled person cannot sign in; the row and its factors stay) and
 *   `users.last_sign_in_at` (shown on the People page).
 * - `realms.require_admin_factor`: the tenant policy that an Account Admin must have a second
 *   factor. True for every realm (existing ones included: their admins enrol at their next
 *   sign-in); the development `demo` seed turns it off.
 * - `user_invitations`: a single-use link; only the HMAC (SECRET_PEPPER) of its token is kept.
 *   `accepted_at` / `revoked_at` end it; `expires_at` bounds it.
 * - `user_factors`: passkeys (WebAuthn public key credentials: the public key and counter only)
 *   and at most one TOTP authenticator per person (its shared secret AES-256-GCM under
 *   KEY_ENCRYPTION_KEY, as signing keys are; `totp_last_step` refuses a code reused in its window).
 * - `user_recovery_codes`: ten single-use codes per set, kept as HMAC (SECRET_PEPPER) digests.
 * - `user_security_events`: what happens at the realm itself (a factor enrolled or used during a
 *   sign-in, an invitation accepted, a recovery code spent), written in the transaction of the
 *   change; account-admin's audit trail reads it beside its own.
 */
export const peopleAndSecondFactors: Migration = {
  name: '008-people-and-second-factors',
  // long: a migration: the DDL of the tables it creates, statement after statement.
  async up(knex: Knex) {
    await knex.schema.alterTable('users', (t) => {
      t.timestamp('disabled_at', { useTz: true });
      t.timestamp('last_sign_in_at', { useTz: true });
    });
    await knex.schema.alterTable('realms', (t) => {
      t.boolean('require_admin_factor').notNullable().defaultTo(true);
    });

    await knex.schema.createTable('user_invitations', (t) => {
      t.uuid('id').primary();
      t.text('realm').notNullable().references('name').inTable('realms').onDelete('CASCADE');
      t.text('email').notNullable();
      t.text('role').notNullable();
      // HMAC-SHA-256(SECRET_PEPPER, token), hex. The token itself is never stored.
      t.text('token_digest').notNullable().unique();
      t.text('created_by');
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.timestamp('accepted_at', { useTz: true });
      t.text('accepted_sub');
      t.timestamp('revoked_at', { useTz: true });
    });
    await knex.raw(
      "alter table user_invitations add constraint user_invitations_role check (role in ('View', 'Edit', 'Account Admin'))",
    );
    await knex.raw('create index user_invitations_realm on user_invitations (realm, created_at)');

    await knex.schema.createTable('user_factors', (t) => {
      t.uuid('id').primary();
      t.text('sub').notNullable().references('sub').inTable('principals');
      t.text('realm').notNullable();
      t.text('kind').notNullable();
      t.text('label').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('last_used_at', { useTz: true });
      // Passkeys: the credential id (base64url), its COSE public key, signature counter and hints.
      t.text('credential_id');
      t.binary('public_key');
      t.bigInteger('sign_count');
      t.specificType('transports', 'text[]');
      t.text('aaguid');
      t.boolean('backed_up');
      // TOTP: iv (12) || tag (16) || ciphertext of the base32 secret; the last time step accepted.
      t.binary('totp_secret_encrypted');
      t.bigInteger('totp_last_step');
      t.index(['sub']);
    });
    await knex.raw(
      "alter table user_factors add constraint user_factors_kind check (kind in ('passkey', 'totp'))",
    );
    await knex.raw(
      "alter table user_factors add constraint user_factors_passkey check (kind <> 'passkey' or (credential_id is not null and public_key is not null and sign_count is not null))",
    );
    await knex.raw(
      "alter table user_factors add constraint user_factors_totp check (kind <> 'totp' or totp_secret_encrypted is not null)",
    );
    // A credential id names one passkey in a realm (a discoverable sign-in finds its person by it).
    await knex.raw(
      'create unique index user_factors_credential on user_factors (realm, credential_id) where credential_id is not null',
    );
    await knex.raw(
      "create unique index user_factors_one_totp on user_factors (sub) where kind = 'totp'",
    );

    await knex.schema.createTable('user_recovery_codes', (t) => {
      t.text('sub').notNullable().references('sub').inTable('principals');
      // HMAC-SHA-256(SECRET_PEPPER, code), hex.
      t.text('digest').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('used_at', { useTz: true });
      t.primary(['sub', 'digest']);
    });

    await knex.schema.createTable('user_security_events', (t) => {
      t.bigIncrements('id').primary();
      t.text('realm').notNullable();
      t.timestamp('occurred_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.text('actor_sub');
      t.text('actor_email');
      t.text('action').notNullable();
      t.text('target_sub');
      t.text('target_email');
      t.jsonb('details').notNullable().defaultTo('{}');
      t.text('address');
      t.text('request_id');
    });
    await knex.raw(
      'create index user_security_events_realm_id on user_security_events (realm, id desc)',
    );
  },
  async down(knex: Knex) {
    for (const table of [
      'user_security_events',
      'user_recovery_codes',
      'user_factors',
      'user_invitations',
    ]) {
      await knex.schema.dropTableIfExists(table);
    }
    await knex.schema.alterTable('realms', (t) => t.dropColumn('require_admin_factor'));
    await knex.schema.alterTable('users', (t) => t.dropColumns('disabled_at', 'last_sign_in_at'));
  },
};
