/** Creates the database (development), the `auth` schema and applies the migrations, then exits. */
import { runMigrationsMain } from '@plant/shared/service-main';
import { configShape } from './config.js';
import { migrations, SCHEMA } from './migrations/index.js';

runMigrationsMain({
  name: 'token-service-migrate',
  schema: SCHEMA,
  migrations,
  databaseUrl: configShape.DATABASE_URL,
});
