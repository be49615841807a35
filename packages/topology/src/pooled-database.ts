/**
 * Postgres as production reaches it through PgBouncer: a database of the test's own on the
 * shared server, the three service roles `deploy/postgres/init-roles.sh` creates (each owning
 * its schema, its search_path set on the role, so every pooled server connection has it), and
 * a PgBouncer of the test's own in transaction pooling in front. Migrations run straight
 * against Postgres (MIGRATION_DATABASE_URL); the services connect through the pooler.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  REPO_ROOT,
  startPgBouncer,
  TEST_DATABASE_URL,
  uniqueName,
  type PgBouncerServer,
  type ServiceName,
} from '@plant/test-kit';

const run = promisify(execFile);
const SERVICES: ServiceName[] = ['token-service', 'plant-store', 'account-admin'];
const envPrefix = (service: ServiceName) => service.toUpperCase().replace(/-/g, '_');

export interface PooledDatabase {
  database: string;
  pgbouncer: PgBouncerServer;
  /** A service's role straight to Postgres (migrations), and through PgBouncer (the service). */
  directUrlOf(service: ServiceName): string;
  pooledUrlOf(service: ServiceName): string;
  /** Each service's built migrations (of `root`, default this checkout), given both URLs as production gives them. */
  migrate(root?: string): Promise<void>;
  /** One query on the database as the server's superuser, straight to Postgres (psql -At): its rows. */
  sql(query: string): Promise<string>;
  drop(): Promise<void>;
}

export interface PooledDatabaseOptions {
  /** The Postgres server, as its superuser (default the shared test server). */
  serverUrl?: string;
  /** PgBouncer's wait after a failed server login, in seconds (see `startPgBouncer`). */
  serverLoginRetry?: number;
}

// long: the database, its roles and the pooler, each undone when a later step fails.
export async function startPooledDatabase({
  serverUrl = TEST_DATABASE_URL,
  serverLoginRetry,
}: PooledDatabaseOptions = {}): Promise<PooledDatabase> {
  const server = new URL(serverUrl);
  const database = uniqueName('topo_pool').replace(/-/g, '_');
  const roles = Object.fromEntries(
    SERVICES.map((s) => [s, `${database}_${s.replace(/-/g, '_')}`]),
  ) as Record<ServiceName, string>;
  const password = `test-only-${database}`;
  const adminEnv = {
    ...process.env,
    PGHOST: server.hostname,
    PGPORT: server.port || '5432',
    PGUSER: decodeURIComponent(server.username) || 'postgres',
  };
  const psql = (sql: string) =>
    run('psql', ['-v', 'ON_ERROR_STOP=1', '-qAt', '-d', 'postgres', '-c', sql], { env: adminEnv });
  const directUrlOf = (service: ServiceName) => {
    const url = new URL(serverUrl);
    url.username = roles[service];
    url.password = password;
    url.pathname = `/${database}`;
    return url.toString();
  };
  const drop = async () => {
    await psql(`drop database if exists "${database}" with (force)`);
    for (const role of Object.values(roles)) await psql(`drop role if exists "${role}"`);
  };

  await psql(`create database "${database}"`);
  let pgbouncer: PgBouncerServer | undefined;
  try {
    const initEnv: NodeJS.ProcessEnv = {
      ...adminEnv,
      POSTGRES_USER: adminEnv.PGUSER,
      POSTGRES_DB: database,
    };
    for (const service of SERVICES) {
      initEnv[`${envPrefix(service)}_DB_ROLE`] = roles[service];
      initEnv[`${envPrefix(service)}_DB_PASSWORD`] = password;
    }
    await run('bash', [join(REPO_ROOT, 'deploy/postgres/init-roles.sh')], { env: initEnv });
    pgbouncer = await startPgBouncer({
      serverUrl,
      ...(serverLoginRetry === undefined ? {} : { serverLoginRetry }),
      databases: { [database]: { dbname: database } },
      users: Object.fromEntries(Object.values(roles).map((role) => [role, password])),
    });
  } catch (err) {
    await drop();
    throw err;
  }
  const pooled = pgbouncer;
  return {
    database,
    pgbouncer: pooled,
    directUrlOf,
    pooledUrlOf: (service) => pooled.urlOf(database, roles[service]),
    async migrate(root = REPO_ROOT) {
      for (const service of SERVICES) {
        await run(process.execPath, [join(root, 'services', service, 'dist/migrate.js')], {
          env: {
            PATH: process.env.PATH ?? '',
            DATABASE_URL: pooled.urlOf(database, roles[service]),
            MIGRATION_DATABASE_URL: directUrlOf(service),
            LOG_LEVEL: 'warn',
          },
        });
      }
    },
    async sql(query) {
      const { stdout } = await run(
        'psql',
        ['-v', 'ON_ERROR_STOP=1', '-qAt', '-d', database, '-c', query],
        { env: adminEnv },
      );
      return stdout.trim();
    },
    async drop() {
      await pooled.stop();
      await drop();
    },
  };
}
