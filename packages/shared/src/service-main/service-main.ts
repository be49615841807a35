/**
 * What every service's `start.ts` and `migrate.ts` do around their own wiring, in one place so
 * the processes behave alike: a configuration error exits 1 with one line naming the variable;
 * a failure to start exits 1 with its message only (a stack or a driver's error object could
 * quote a connection string); the one `listening` line spawnService waits for, with how long the
 * modules took to load and the service to listen; SIGTERM/SIGINT drain, then exit.
 */
import { credentialUrlKey, env, exitOnConfigError, loadConfig } from '../config/index.js';
import {
  createDatabase,
  ensureDatabaseExists,
  migrateLatest,
  type Migration,
} from '../db/index.js';
import { createLogger, type Logger } from '../logging/index.js';
import { stopTracing } from '../tracing/index.js';
import { onShutdownSignal } from '../http/index.js';

export interface RunningService {
  port: number;
  /** Logged with `listening` when the service has an internal API listener (the token service). */
  internalPort?: number;
  /** The management listener's port (probes, metrics), logged with `listening`. */
  managementPort: number;
  /** Drains in-flight requests, then closes pools and connections. */
  stop(): Promise<void>;
}

/** Loads the config, starts the service with its logger, logs `listening` and stops on a signal. */
export function runServiceMain<C extends { LOG_LEVEL: string }>(
  name: string,
  load: () => C,
  run: (config: C, logger: Logger) => Promise<RunningService>,
): void {
  // From the process's start (performance's time origin): node's own start and the module graph.
  const loadedMs = Math.round(performance.now());
  let config: C;
  try {
    config = load();
  } catch (err) {
    exitOnConfigError(err);
  }
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  run(config, logger).then(
    (running) => {
      const { port, internalPort, managementPort } = running;
      const ports =
        internalPort === undefined
          ? { port, managementPort }
          : { port, internalPort, managementPort };
      // Where a start's time went, for whoever sizes probes and rollouts (docs/deploy.md, "Scaling").
      logger.info(
        { ...ports, startup: { loadedMs, listeningMs: Math.round(performance.now()) } },
        'listening',
      );
      onShutdownSignal(
        async () => {
          await running.stop();
          // The spans of the drained requests go out before the process does.
          await stopTracing();
          logger.info('stopped');
        },
        (msg) => logger.info(msg),
      );
    },
    (err: unknown) => failed(`${name} failed to start`, err),
  );
}

/** The migrations' own database URL, when the services' DATABASE_URL goes through a pooler. */
const MIGRATION_DATABASE_URL_KEY = credentialUrlKey(env.url().optional()).describe(
  'Postgres URL the migrations use instead of DATABASE_URL: the database itself when DATABASE_URL goes through PgBouncer',
);

export interface MigrationsMainOptions {
  /** The process name on its log lines and in pg_stat_activity. */
  name: string;
  schema: string;
  migrations: Migration[];
  /** The service's own DATABASE_URL definition (its default and doc line). */
  databaseUrl?: ReturnType<typeof env.url>;
}

/** Creates the database (development only), the schema, applies the migrations and exits. */
export function runMigrationsMain({
  name,
  schema,
  migrations,
  databaseUrl = env.url('postgres://postgres@127.0.0.1:5432/plantstore'),
}: MigrationsMainOptions): void {
  let config: {
    DATABASE_URL: string;
    MIGRATION_DATABASE_URL?: string | undefined;
    LOG_LEVEL: string;
  };
  try {
    config = loadConfig({
      DATABASE_URL: databaseUrl,
      MIGRATION_DATABASE_URL: MIGRATION_DATABASE_URL_KEY,
      LOG_LEVEL: env.logLevel(),
    });
  } catch (err) {
    exitOnConfigError(err);
  }
  // Migrations take locks and run DDL for their whole run: straight to Postgres, never through a pooler.
  const connectionString = config.MIGRATION_DATABASE_URL ?? config.DATABASE_URL;
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  const migrate = async () => {
    await ensureDatabaseExists(connectionString);
    const db = createDatabase({
      connectionString,
      schema,
      poolMax: 1,
      applicationName: name,
      logger,
    });
    try {
      const applied = await migrateLatest(db, schema, migrations);
      logger.info({ schema, applied }, 'migrations applied');
    } finally {
      await db.destroy();
    }
  };
  migrate().then(
    () => undefined,
    (err: unknown) => failed(`${name} failed`, err),
  );
}

function failed(what: string, err: unknown): never {
  process.stderr.write(`${what}: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
}
