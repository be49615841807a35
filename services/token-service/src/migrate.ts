import { createDatabase, ensureDatabaseExists, env, exitOnConfigError, loadConfig, migrateLatest } from '@plant/shared';
import { migrations, SCHEMA } from './data-access/migrations/index.js';

let databaseUrl: string;
try {
  ({ DATABASE_URL: databaseUrl } = loadConfig({ DATABASE_URL: env.url('postgres://postgres@127.0.0.1:5432/plantstore') }));
} catch (err) {
  exitOnConfigError(err);
}

await ensureDatabaseExists(databaseUrl);
const db = createDatabase({ connectionString: databaseUrl, schema: SCHEMA, poolMax: 1, applicationName: 'token-service-migrate' });
try {
  const applied = await migrateLatest(db, SCHEMA, migrations);
  process.stdout.write(`${JSON.stringify({ msg: 'migrated', schema: SCHEMA, applied })}\n`);
} finally {
  await db.destroy();
}
