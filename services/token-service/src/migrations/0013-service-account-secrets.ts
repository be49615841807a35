import type { Knex, Migration } from '@plant/shared/db';

/**
 * Two live secrets per service account, and revocation per credential (decision 0035).
 *
 * - `service_account_secrets`: an account's secrets, each with its id (what a token's `cred`
 *   claim names as `secret:<id>`), creation, optional expiry and last use; only the keyed
 *   digest is stored. At most two per account, counted under the account's lock. Existing
 *   secrets are carried over with a fresh id.
 * - `service_accounts.secret_digest` / `secret_created_at` / `secret_last_used_at` stay
 *   (expand-only): the token service keeps them equal to the account's newest secret, so a
 *   replica of the previous release, during a rollout, authenticates that one. The other way,
 *   a trigger carries what such a replica (or an operator's SQL) writes there into the table:
 *   a digest the table does not hold replaces every secret (its reset, a creation), a null
 *   removes them all (its secret removal, its leak revocation). What this release writes there
 *   is always a digest the table holds, or null with the table empty: the trigger does nothing.
 * - `revocation_changes.credential`: null for a change of the principal's version (the trigger's
 *   rows), else the credential whose tokens the change revokes. Such rows are written by the
 *   token service under the same feed lock, get a position like any other, and are pruned by
 *   the same horizon.
 * - `service_account_leaks.secret_id`: which of the account's secrets a leak report named.
 */
export const serviceAccountSecrets: Migration = {
  name: '013-service-account-secrets',
  async up(knex: Knex) {
    await knex.schema.createTable('service_account_secrets', (t) => {
      t.text('sub').notNullable().references('sub').inTable('principals');
      t.text('id').notNullable();
      t.text('realm').notNullable();
      // HMAC-SHA-256(SECRET_PEPPER, secret), hex. The secret itself is never stored.
      t.text('digest').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('expires_at', { useTz: true });
      t.text('created_by');
      t.timestamp('last_used_at', { useTz: true });
      t.primary(['sub', 'id']);
    });
    // A leak report finds a secret by its digest.
    await knex.raw(
      'create index service_account_secrets_digest on service_account_secrets (digest)',
    );
    await knex.raw(`
      insert into service_account_secrets (sub, id, realm, digest, created_at, last_used_at)
        select sub, 'sec-' || substr(md5(random()::text || sub), 1, 16), realm, secret_digest,
               secret_created_at, secret_last_used_at
        from service_accounts where secret_digest is not null`);
    await knex.schema.alterTable('revocation_changes', (t) => {
      t.text('credential');
    });
    const schema = await currentSchema(knex);
    // Names are schema-qualified: the trigger also runs for sessions whose search_path is elsewhere.
    // The creation time is read through to_jsonb: the row may lack the column (a schema migrated down).
    await knex.raw(
      `
      create function ??.carry_account_secret() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' and new.secret_digest is null then
          return null;
        end if;
        if new.secret_digest is null then
          delete from ??.service_account_secrets where sub = new.sub;
        elsif not exists (select 1 from ??.service_account_secrets where sub = new.sub and digest = new.secret_digest) then
          delete from ??.service_account_secrets where sub = new.sub;
          insert into ??.service_account_secrets (sub, id, realm, digest, created_at)
            values (new.sub, 'sec-' || substr(md5(random()::text || new.sub), 1, 16), new.realm,
                    new.secret_digest, coalesce((to_jsonb(new) ->> 'secret_created_at')::timestamptz, now()));
        end if;
        return null;
      end $$`.replace(/\?\?/g, `"${schema}"`),
    );
    await knex.raw(`
      create trigger service_accounts_secret_carried
        after insert or update of secret_digest on service_accounts
        for each row
        execute function carry_account_secret()`);
    // Which secret a leak report named (the report says which; the other keeps working).
    await knex.schema.alterTable('service_account_leaks', (t) => {
      t.text('secret_id');
    });
  },
  async down(knex: Knex) {
    await knex.raw('drop trigger service_accounts_secret_carried on service_accounts');
    await knex.raw('drop function carry_account_secret()');
    await knex.schema.alterTable('service_account_leaks', (t) => {
      t.dropColumn('secret_id');
    });
    await knex.schema.alterTable('revocation_changes', (t) => {
      t.dropColumn('credential');
    });
    await knex.schema.dropTableIfExists('service_account_secrets');
  },
};

async function currentSchema(knex: Knex): Promise<string> {
  const { rows } = (await knex.raw('select current_schema() as schema')) as {
    rows: Array<{ schema: string }>;
  };
  const schema = rows[0]?.schema;
  if (!schema || !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`unexpected schema ${schema}`);
  return schema;
}
