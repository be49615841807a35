import type { Migration } from '@plant/shared/db';
import { SCHEMA } from './schema.js';

/**
 * The audit trail: one row per admin action that happened. It names the actor, the
 * action, the target service account, when, the request id and the caller's address;
 * `details` holds non-secret facts of a change (the new role or grants). No column ever
 * holds a secret or a token. Rows are only inserted, never updated.
 */
export const createAuditEvents: Migration = {
  name: '0001-create-audit-events',
  async up(knex) {
    await knex.schema.withSchema(SCHEMA).createTable('audit_events', (table) => {
      table.bigIncrements('id').primary();
      table.text('tenant').notNullable();
      table.timestamp('occurred_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.text('actor_sub').notNullable();
      table.text('actor_email').nullable();
      table.text('actor_type').notNullable();
      table.text('action').notNullable();
      table.text('target_client_id').notNullable();
      table.text('target_name').nullable();
      table.jsonb('details').notNullable().defaultTo('{}');
      table.text('request_id').nullable();
      table.text('address').nullable();
    });
    await knex.raw(
      `alter table ??.audit_events
         add constraint audit_events_actor_type check (actor_type in ('user', 'service_account')),
         add constraint audit_events_action check (action in ('service_account.create', 'service_account.update', 'service_account.reset_secret', 'service_account.delete'))`,
      [SCHEMA],
    );
    // Newest first per tenant: the Activity page and GET /api/v1/audit-events page by id.
    await knex.raw('create index audit_events_tenant_id on ??.audit_events (tenant, id desc)', [
      SCHEMA,
    ]);
  },
  async down(knex) {
    await knex.schema.withSchema(SCHEMA).dropTableIfExists('audit_events');
  },
};
