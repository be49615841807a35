import { afterAll, beforeAll } from '@jest/globals';
import { createDatabase, ensureDatabaseExists, migrateLatest } from '@plant/shared/db';
import { TEST_DATABASE_URL, uniqueName } from '@plant/test-kit';
import { migrations, SCHEMA } from '../../src/migrations/index.js';
import type { Harness } from './harness.js';

export interface PrivateDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of the test file's own on the shared server, with the token service's schema: for
 * assertions about the whole revocation feed (its head, its floor, a quiet stretch), which other
 * files' changes would disturb in the shared test database.
 */
export async function createPrivateDatabase(): Promise<PrivateDatabase> {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${uniqueName('feed').replace(/-/g, '_')}`;
  const connectionString = url.toString();
  await ensureDatabaseExists(connectionString);
  const db = createDatabase({ connectionString, schema: SCHEMA, poolMax: 1 });
  try {
    await migrateLatest(db, SCHEMA, migrations);
  } finally {
    await db.destroy();
  }
  return {
    url: connectionString,
    async drop() {
      const admin = new URL(connectionString);
      const name = admin.pathname.slice(1);
      admin.pathname = '/postgres';
      const server = createDatabase({
        connectionString: admin.toString(),
        schema: 'public',
        poolMax: 1,
      });
      try {
        await server.raw(`drop database if exists "${name}" with (force)`);
      } finally {
        await server.destroy();
      }
    },
  };
}

/**
 * A test file's harness on a private database, started before its tests and dropped after:
 * `get()` hands it to the tests.
 */
export function usePrivateHarness(start: (env: Record<string, string>) => Promise<Harness>): {
  get(): Harness;
} {
  let database: PrivateDatabase | undefined;
  let harness: Harness | undefined;
  beforeAll(async () => {
    database = await createPrivateDatabase();
    harness = await start({ DATABASE_URL: database.url });
  });
  afterAll(async () => {
    await harness?.close();
    await database?.drop();
  });
  return {
    get() {
      if (harness === undefined) throw new Error('the harness has not started');
      return harness;
    },
  };
}
