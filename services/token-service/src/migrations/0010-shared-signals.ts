import type { Knex, Migration } from '@plant/shared/db';

/**
 * Shared Signals (SSF 1.0): which service accounts may receive signals, the streams they
 * configure, and each stream's queue of security events. The queue is the outbox: a change of
 * an account writes its events into the queues of the streams that want them in the
 * transaction that makes the change, so what committed is delivered, and what rolled back was
 * never announced. `queued` counts a stream's rows (kept under the stream's row lock), so the
 * backlog bound is checked without counting; `dropped_events` counts what the bound refused.
 */
export const sharedSignals: Migration = {
  name: '010-shared-signals',
  async up(knex: Knex) {
    await knex.schema.alterTable('service_accounts', (t) => {
      t.boolean('receive_signals').notNullable().defaultTo(false);
    });
    await knex.schema.createTable('ssf_streams', (t) => {
      t.text('id').primary();
      t.text('realm').notNullable().references('name').inTable('realms').onDelete('CASCADE');
      t.text('owner_sub').notNullable();
      t.text('delivery_method').notNullable();
      t.text('endpoint_url');
      // The receiver's Authorization header for push, AES-GCM sealed (never in clear).
      t.binary('authorization_header_sealed');
      t.jsonb('events_requested').notNullable().defaultTo('[]');
      t.text('description');
      t.text('status').notNullable().defaultTo('enabled');
      t.text('status_reason');
      t.integer('queued').notNullable().defaultTo(0);
      // The stream's backlog bound, fixed at creation (SSF_STREAM_BACKLOG then).
      t.integer('backlog_limit').notNullable();
      t.bigInteger('dropped_events').notNullable().defaultTo(0);
      t.integer('attempts').notNullable().defaultTo(0);
      t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('lease_until', { useTz: true });
      t.text('last_error');
      t.timestamp('verified_at', { useTz: true });
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.index(['realm']);
      t.index(['owner_sub']);
    });
    await knex.raw(
      "create index ssf_streams_push_due on ?? (next_attempt_at) where delivery_method = 'push' and queued > 0",
      ['ssf_streams'],
    );
    await knex.schema.createTable('ssf_stream_subjects', (t) => {
      t.text('stream_id').notNullable().references('id').inTable('ssf_streams').onDelete('CASCADE');
      t.text('sub').notNullable();
      // 'added' limits the stream to its added subjects; 'removed' leaves one out.
      t.text('mode').notNullable();
      t.primary(['stream_id', 'sub']);
    });
    await knex.schema.createTable('ssf_stream_events', (t) => {
      t.bigIncrements('seq').primary();
      t.text('stream_id').notNullable().references('id').inTable('ssf_streams').onDelete('CASCADE');
      t.text('jti').notNullable();
      t.text('event_type').notNullable();
      // The subject: a service account's sub, or null for the stream itself (verification).
      t.text('sub');
      t.jsonb('event').notNullable();
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.unique(['stream_id', 'jti']);
      t.index(['stream_id', 'seq']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('ssf_stream_events');
    await knex.schema.dropTable('ssf_stream_subjects');
    await knex.schema.dropTable('ssf_streams');
    await knex.schema.alterTable('service_accounts', (t) => {
      t.dropColumn('receive_signals');
    });
  },
};
