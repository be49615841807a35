// Jest global setup: plain ESM over the built packages (`pnpm test` builds first), because
// jest loads this file outside its module transform.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase, ensureDatabaseExists, migrateLatest } from '@plant/shared/db';
import { REPO_ROOT, TEST_DATABASE_URL } from './dist/env.js';

/** Creates the test database and applies each service's migrations (`dist/migrations/index.js`). */
export default async function globalSetup() {
  await ensureDatabaseExists(TEST_DATABASE_URL);
  const servicesDir = join(REPO_ROOT, 'services');
  const services = existsSync(servicesDir) ? readdirSync(servicesDir) : [];
  for (const service of services) {
    const file = join(servicesDir, service, 'dist/migrations/index.js');
    if (!existsSync(file)) continue;
    const { SCHEMA, migrations } = await import(file);
    const db = createDatabase({ connectionString: TEST_DATABASE_URL, schema: SCHEMA, poolMax: 1 });
    try {
      await migrateLatest(db, SCHEMA, migrations);
    } finally {
      await db.destroy();
    }
  }
}
