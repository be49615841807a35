import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

export type { Knex } from 'knex';

/** A migration as a plain module: services list theirs in code, so builds and tests load the same files. */
export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

export interface DatabaseOptions {
  connectionString: string;
  /** The service's own schema: its tables and its migration bookkeeping live there. */
  schema: string;
  poolMax?: number;
  applicationName?: string;
  /** Where knex's own warnings go (it writes plain text to the console otherwise). */
  logger?: {
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
    debug(obj: object, msg: string): void;
  };
}

/** A knex instance bound to one schema. int8 stays a string (exact int64 end to end). */
export function createDatabase({
  connectionString,
  schema,
  poolMax = 10,
  applicationName,
  logger,
}: DatabaseOptions): Knex {
  const text = (message: unknown) => ({
    detail: typeof message === 'string' ? message : String((message as Error)?.message ?? message),
  });
  return knexFactory({
    log: {
      warn: (m: unknown) => logger?.warn(text(m), 'knex warning'),
      error: (m: unknown) => logger?.error(text(m), 'knex error'),
      deprecate: (m: unknown) => logger?.warn(text(m), 'knex deprecation'),
      debug: (m: unknown) => logger?.debug(text(m), 'knex debug'),
    },
    client: 'pg',
    connection: { connectionString, application_name: applicationName ?? schema },
    searchPath: [schema],
    pool: { min: 0, max: poolMax, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: 5_000,
  });
}

/** SQLSTATEs of a batch that gave way: its lock wait timed out, a deadlock, a serialization failure. */
const RETRIED_CODES = new Set(['55P03', '40P01', '40001']);
/** Attempts of a batch of migrations that gave way. */
const MIGRATION_ATTEMPTS = 10;
/** The longest a migration's statement waits for a table lock before the batch gives way. */
const MIGRATION_LOCK_TIMEOUT = '200ms';

/**
 * Applies the service's migrations; knex's lock keeps concurrent runners from both applying.
 * Applied while the previous release serves (a rolling upgrade), a migration's DDL takes
 * table locks that serving transactions' row locks may be waiting on in the other order: one
 * of the two is aborted, and while the DDL waits every query of that table queues behind it.
 * So each statement waits at most `MIGRATION_LOCK_TIMEOUT` for its lock (well under Postgres's
 * one-second deadlock check, so in a cycle it is the migrations that give way, not a serving
 * request); a batch that gave way was rolled back whole (knex runs a batch in one
 * transaction) and is run again, up to ten times, after a pause that lets the serving
 * transactions finish.
 */
export async function migrateLatest(
  db: Knex,
  schema: string,
  migrations: Migration[],
  { pauseMs = 250 }: { pauseMs?: number } = {},
): Promise<string[]> {
  const bounded = migrations.map((m) => ({
    ...m,
    async up(knex: Knex) {
      // `local`: for the batch's transaction only, not the pooled connection after it.
      await knex.raw(`set local lock_timeout = '${MIGRATION_LOCK_TIMEOUT}'`);
      await m.up(knex);
    },
  }));
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(db, schema, bounded);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= MIGRATION_ATTEMPTS || typeof code !== 'string' || !RETRIED_CODES.has(code))
        throw err;
      await new Promise((resolve) => setTimeout(resolve, pauseMs * attempt));
    }
  }
}

async function migrateOnce(db: Knex, schema: string, migrations: Migration[]): Promise<string[]> {
  // In production the service's role owns its schema but may not create schemas, and
  // Postgres checks that privilege even for `create schema if not exists`: ask first.
  const found = await db.raw('select 1 from pg_namespace where nspname = ?', [schema]);
  if (found.rows.length === 0) await db.raw('create schema if not exists ??', [schema]);
  const byName = new Map(migrations.map((m) => [m.name, m]));
  const [, applied] = (await db.migrate.latest({
    schemaName: schema,
    tableName: 'knex_migrations',
    migrationSource: {
      getMigrations: async () => migrations.map((m) => m.name),
      getMigrationName: (name: string) => name,
      getMigration: async (name: string) => byName.get(name)!,
    },
  })) as [number, string[]];
  return applied;
}

/** Creates the database named in the URL if it is missing (local development and tests only). */
export async function ensureDatabaseExists(connectionString: string): Promise<void> {
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (name === '' || name === 'postgres') return;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`create database "${name.replace(/"/g, '""')}"`);
      } catch (err) {
        // Another process created it between our check and create.
        if (
          (err as { code?: string }).code !== '42P04' &&
          (err as { code?: string }).code !== '23505'
        )
          throw err;
      }
    }
  } finally {
    await client.end();
  }
}
