import type { Knex, Migration } from '@plant/shared/db';

/**
 * Who may act for others (token exchange, RFC 8693): a service account an Account Admin allowed
 * to exchange a subject's token for one target audience, with at most `scope`. One row per
 * (account, audience); the rows go with the account (cascade), so a deleted account leaves no
 * permission behind. A new table only: older replicas never read it (expand-only).
 */
export const tokenExchangeDelegations: Migration = {
  name: '014-token-exchange-delegations',
  async up(knex: Knex) {
    await knex.schema.createTable('service_account_delegations', (t) => {
      t.text('sub').notNullable().references('sub').inTable('service_accounts').onDelete('CASCADE');
      t.text('realm').notNullable();
      t.text('audience').notNullable();
      // Space-separated, a subset of `plants:read plants:write`.
      t.text('scope').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.text('created_by');
      t.primary(['sub', 'audience']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('service_account_delegations');
  },
};
