/** Creates the database (development), the `admin` schema and applies the migrations, then exits. */
import { runMigrationsMain } from '@plant/shared/service-main';
import { configShape } from './config.js';
import { migrations, SCHEMA } from './migrations/index.js';

runMigrationsMain({
  name: 'account-admin-migrate',
  schema: SCHEMA,
  migrations,
  databaseUrl: configShape.DATABASE_URL,
});
