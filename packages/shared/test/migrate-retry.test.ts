/**
 * A batch of migrations that Postgres aborts in a deadlock with a serving transaction (a rolling
 * upgrade applies them under load) is run again, whole, and applied once; any other failure is
 * not retried. Real Postgres: the deadlock is built from two sessions locking two tables in
 * opposite orders, with the migration's session the one that detects it.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { createDatabase, type Knex, type Migration, migrateLatest } from '../src/db/index.js';

const DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/plantstore_test';
const SCHEMA = `migrate_retry_${process.pid}`;

let db: Knex;
let serving: pg.Client;

beforeAll(async () => {
  db = createDatabase({ connectionString: DATABASE_URL, schema: SCHEMA, poolMax: 2 });
  await db.raw('create schema ??', [SCHEMA]);
  await db.raw('create table ??.a (id int)', [SCHEMA]);
  await db.raw('create table ??.b (id int)', [SCHEMA]);
  serving = new pg.Client({ connectionString: DATABASE_URL });
  await serving.connect();
});

afterAll(async () => {
  await serving?.end();
  await db?.raw('drop schema if exists ?? cascade', [SCHEMA]);
  await db?.destroy();
});

/** The first test's migration, listed again (already applied) in the tests after it. */
const deadlockingName: Migration = {
  name: '001-deadlocking',
  async up() {},
  async down() {},
};

/** Resolves once the session `pid` waits on a lock. */
async function waitingOnLock(pid: number): Promise<void> {
  for (;;) {
    const { rows } = await db.raw(
      "select 1 from pg_stat_activity where pid = ? and wait_event_type = 'Lock'",
      [pid],
    );
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('migrateLatest', () => {
  test('When the first attempt deadlocks with a serving transaction, then the batch is run again and applied once', async () => {
    const servingPid = (await serving.query('select pg_backend_pid() as pid')).rows[0]
      .pid as number;
    let attempts = 0;
    let servingDone: Promise<unknown> = Promise.resolve();
    const deadlocking: Migration = {
      ...deadlockingName,
      async up(knex) {
        attempts += 1;
        await knex.raw('create table ??.applied (attempt int)', [SCHEMA]);
        await knex.raw('insert into ??.applied values (?)', [SCHEMA, attempts]);
        if (attempts > 1) return;
        // The serving transaction holds b and then waits on a, which this batch holds.
        await knex.raw('lock table ??.a in access exclusive mode', [SCHEMA]);
        await serving.query("begin; set local deadlock_timeout = '60s'");
        await serving.query(`lock table "${SCHEMA}".b in access exclusive mode`);
        servingDone = serving
          .query(`lock table "${SCHEMA}".a in access exclusive mode`)
          .then(() => serving.query('commit'));
        await waitingOnLock(servingPid);
        // This session detects the cycle first, so it is the one Postgres aborts.
        await knex.raw("set local deadlock_timeout = '100ms'");
        await knex.raw('lock table ??.b in access exclusive mode', [SCHEMA]);
      },
      async down() {},
    };

    const applied = await migrateLatest(db, SCHEMA, [deadlocking], { pauseMs: 10 });
    await servingDone;

    expect(attempts).toBe(2);
    expect(applied).toEqual(['001-deadlocking']);
    const rows = await db.withSchema(SCHEMA).select('attempt').from('applied');
    expect(rows).toEqual([{ attempt: 2 }]);
    const recorded = await db.withSchema(SCHEMA).select('name').from('knex_migrations');
    expect(recorded).toEqual([{ name: '001-deadlocking' }]);
  });

  test('When a serving transaction holds a table past the lock timeout, then the batch gives way and is run again once it is free', async () => {
    await serving.query('begin');
    await serving.query(`lock table "${SCHEMA}".a in access share mode`);
    let attempts = 0;
    const waiting: Migration = {
      name: '002-waiting',
      async up(knex) {
        attempts += 1;
        // The serving transaction finishes while the first attempt's batch waits its pause.
        if (attempts === 2) await serving.query('commit');
        await knex.raw('alter table ??.a add column if not exists note text', [SCHEMA]);
      },
      async down() {},
    };

    const applied = await migrateLatest(db, SCHEMA, [deadlockingName, waiting], { pauseMs: 10 });

    expect(attempts).toBe(2);
    expect(applied).toEqual(['002-waiting']);
  });

  test('When a migration fails for another reason, then it is not run again', async () => {
    let attempts = 0;
    const failing: Migration = {
      name: '002-failing',
      async up(knex) {
        attempts += 1;
        await knex.raw('select * from ??.no_such_table', [SCHEMA]);
      },
      async down() {},
    };

    // A schema of its own: the first test's migration is not in this list.
    const other = `${SCHEMA}_b`;
    const otherDb = createDatabase({ connectionString: DATABASE_URL, schema: other, poolMax: 1 });
    try {
      await expect(migrateLatest(otherDb, other, [failing], { pauseMs: 10 })).rejects.toMatchObject(
        { code: '42P01' },
      );
      expect(attempts).toBe(1);
    } finally {
      await otherDb.raw('drop schema if exists ?? cascade', [other]);
      await otherDb.destroy();
    }
  });
});
