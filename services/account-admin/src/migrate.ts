/** Creates the database (development), the `admin` schema and applies the migrations, then exits. */
import { createDatabase, createLogger, ensureDatabaseExists, exitOnConfigError, loadConfig, migrateLatest } from '@plant/shared';
import { configShape } from './config.js';
import { migrations, SCHEMA } from './data-access/migrations/index.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig({ DATABASE_URL: configShape.DATABASE_URL, LOG_LEVEL: configShape.LOG_LEVEL });
  } catch (err) {
    exitOnConfigError(err);
  }
  const logger = createLogger({ name: 'account-admin-migrate', level: config.LOG_LEVEL });
  await ensureDatabaseExists(config.DATABASE_URL);
  const db = createDatabase({ connectionString: config.DATABASE_URL, schema: SCHEMA, poolMax: 1, applicationName: 'account-admin-migrate' });
  try {
    const applied = await migrateLatest(db, SCHEMA, migrations);
    logger.info({ schema: SCHEMA, applied }, 'migrations applied');
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`account-admin migrations failed: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});
