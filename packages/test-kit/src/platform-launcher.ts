/**
 * The whole platform as production runs it, for end-to-end tests, component tests and the
 * benchmarks: the built token service, Plant Stores and (when asked) account-admin, each its
 * own process (`spawnService`), on the test database or a Postgres cluster of its own and on a
 * redis-server of its own unless given one, plus what an operator does to it
 * (`platformAdmin`). The token service and account-admin listen on ports chosen before they
 * start, so either can be restarted at the address the others know.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, TEST_DATABASE_URL } from './env.js';
import { platformAdmin, type PlatformAdmin } from './platform-admin.js';
import {
  cliEnv,
  servicesEnv,
  TEST_SECRETS,
  type PlatformSecrets,
  type PlatformSettings,
} from './platform-env.js';
import { startPostgresServer, type PostgresServer } from './postgres-server.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { spawnService, type ServiceName, type ServiceProcess } from './service-process.js';
import { replicaName, type PlatformPorts } from './platform-ports.js';
import { freePort } from './waiting.js';

const run = promisify(execFile);
const SERVICES: ServiceName[] = ['token-service', 'plant-store', 'account-admin'];

export interface PlatformOptions {
  /** Plant Store processes to start (default 1). */
  plantStores?: number;
  /** Start account-admin as a process too (default false; its port is chosen either way). */
  accountAdmin?: boolean;
  /** Postgres (default TEST_DATABASE_URL, migrated by the test run). */
  databaseUrl?: string;
  /** A Postgres cluster of the platform's own instead, migrated here (`platform.postgres`). */
  privatePostgres?: boolean;
  /** Redis (default: a redis-server of the platform's own, `platform.redis`). */
  redisUrl?: string;
  /** AUTH_URL, the token service's public base URL in issuers (default: where it listens). */
  authUrl?: string;
  secrets?: Partial<PlatformSecrets>;
  /** REVOCATION_RESYNC_MS of the Plant Stores and account-admin (default 5000). */
  resyncMs?: number;
  /** Environment over every service's (NODE_ENV, LOG_LEVEL), then over one service's (throttles). */
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Node options of a process, by its name (`plant-store-2`). */
  nodeArgs?: (name: string) => string[];
  /** The node binary of every service (default: this process's; `pnpm bench:soak -- --node`). */
  node?: string;
  /** Each process's output into `<logDir>/<name>.log` instead of a pipe (see `spawnService`). */
  logDir?: string;
  /** Per process start; generous: on a busy 2-core machine a start can take many seconds. */
  timeoutMs?: number;
  /**
   * Processes of a service on ports chosen before they start (`platformPorts`), one per entry,
   * instead of `plantStores`/`accountAdmin`: an ingress can be set up in front of them first,
   * and each comes back at its address when restarted.
   */
  ports?: Partial<PlatformPorts>;
  /** PORTAL_URL of the token service and account-admin (default: where account-admin listens). */
  portalUrl?: string;
  /** The checkout whose built services run (default REPO_ROOT): another release's, for a rolling upgrade. */
  serviceRoot?: string;
}

export interface Platform extends PlatformAdmin {
  databaseUrl: string;
  redisUrl: string;
  redis?: RedisServer;
  postgres?: PostgresServer;
  authUrl: string;
  /** The token service's internal API. */
  internalUrl: string;
  /** account-admin's address (the token service's portal client redirects there). */
  portalUrl: string;
  secrets: PlatformSecrets;
  /** The first token service process (`tokenServices[0]`). */
  tokenService: ServiceProcess;
  /** Every token service process of `ports` (one without). */
  tokenServices: ServiceProcess[];
  plantStores: ServiceProcess[];
  /** The first account-admin process (`accountAdmins[0]`). */
  accountAdmin?: ServiceProcess;
  accountAdmins: ServiceProcess[];
  /** Every process started so far (restarted ones included), for log scans. */
  processes: ServiceProcess[];
  /** The environment a process of the service gets (also for running one in-process). */
  envOf(service: ServiceName, override?: Record<string, string>): Record<string, string>;
  /** Another Plant Store, with `env` over the service's environment. */
  startPlantStore(env?: Record<string, string>): Promise<ServiceProcess>;
  /** Another token service process on its own ephemeral ports (same database and Redis). */
  startTokenServiceReplica(): Promise<ServiceProcess>;
  /**
   * Stops it and starts the service again, with the environment it had (a process on a chosen
   * port comes back there); with `root`, that checkout's build from then on (a rolling upgrade).
   */
  restart(
    svc: ServiceProcess,
    signal?: NodeJS.Signals,
    options?: { root?: string },
  ): Promise<ServiceProcess>;
  stopTokenService(): Promise<void>;
  startTokenService(): Promise<void>;
  /** Stops every process (SIGKILL unless told otherwise: nothing to drain in a teardown) and the private servers. */
  close(signal?: NodeJS.Signals): Promise<void>;
}

/** Applies each built service's migrations to the database (creating it if needed). */
export async function migrateDatabase(databaseUrl: string): Promise<void> {
  const scripts = SERVICES.map((service) =>
    join(REPO_ROOT, 'services', service, 'dist/migrate.js'),
  ).filter((script) => existsSync(script));
  const migrate = (script: string) =>
    run(process.execPath, [script], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    });
  // The first creates the database; each service has its own schema, so the rest run together.
  const [first, ...rest] = scripts;
  if (first !== undefined) await migrate(first);
  await Promise.all(rest.map(migrate));
}

/** Levels at which a service does not say where it listens: every process then gets its PORT. */
const QUIET_LEVELS = new Set(['warn', 'error', 'fatal', 'silent']);

export async function startPlatform(options: PlatformOptions = {}): Promise<Platform> {
  const { resyncMs = 5000, timeoutMs = 60_000, nodeArgs = () => [], logDir, ports = {} } = options;
  const storePorts = ports['plant-store'];
  const tokenPorts = ports['token-service'];
  const portalPorts = ports['account-admin'] ?? (options.accountAdmin ? [await freePort()] : []);
  const plantStores = storePorts?.length ?? options.plantStores ?? 1;
  const redis = options.redisUrl === undefined ? await startRedisServer() : undefined;
  let postgres: PostgresServer | undefined;
  if (options.privatePostgres) {
    try {
      postgres = await startPostgresServer();
      await migrateDatabase(postgres.url);
    } catch (err) {
      await Promise.all([redis?.stop(), postgres?.destroy()]);
      throw err;
    }
  }
  const databaseUrl = postgres?.url ?? options.databaseUrl ?? TEST_DATABASE_URL;
  const { port: tokenServicePort, internalPort } = tokenPorts?.[0] ?? {
    port: await freePort(),
    internalPort: await freePort(),
  };
  const portalPort = portalPorts[0] ?? (await freePort());
  const settings: PlatformSettings = {
    databaseUrl,
    redisUrl: redis?.url ?? options.redisUrl!,
    authUrl: options.authUrl ?? `http://127.0.0.1:${tokenServicePort}`,
    tokenServicePort,
    internalPort,
    portalPort,
    secrets: { ...TEST_SECRETS, ...options.secrets },
    resyncMs,
  };
  const baseEnv = servicesEnv(settings);
  if (options.portalUrl !== undefined)
    for (const service of ['token-service', 'account-admin'] as const)
      baseEnv[service].PORTAL_URL = options.portalUrl;
  const envOf = (service: ServiceName, override: Record<string, string> = {}) => ({
    ...baseEnv[service],
    ...options.env,
    ...options.serviceEnv?.[service],
    ...override,
  });
  const processes: ServiceProcess[] = [];
  /** What each process name was started with over its service's environment: a restart gets it again. */
  const overrides = new Map<string, Record<string, string>>();
  /** The checkout each process name runs from (`restart` with a root changes it). */
  const roots = new Map<string, string>();
  const spawn = async (
    service: ServiceName,
    name: string,
    override: Record<string, string> = overrides.get(name) ?? {},
  ) => {
    overrides.set(name, override);
    const env = envOf(service, override);
    if (QUIET_LEVELS.has(env.LOG_LEVEL ?? 'info')) {
      if (env.PORT === undefined) env.PORT = String(await freePort());
      if (env.MANAGEMENT_PORT === undefined || env.MANAGEMENT_PORT === '0')
        env.MANAGEMENT_PORT = String(await freePort());
    }
    const root = roots.get(name) ?? options.serviceRoot;
    const svc = await spawnService(service, {
      env,
      name,
      timeoutMs,
      ...(root === undefined ? {} : { root }),
      nodeArgs: nodeArgs(name),
      ...(logDir === undefined ? {} : { logDir }),
      ...(options.node === undefined ? {} : { node: options.node }),
    });
    processes.push(svc);
    return svc;
  };
  const closeAll = async (signal: NodeJS.Signals) => {
    await Promise.all(processes.map((svc) => svc.stop(signal)));
    await redis?.stop();
    await postgres?.destroy();
  };
  /** Waits for every start; when one fails, stops what did start and throws its error. */
  const allStarted = async (starts: Array<Promise<ServiceProcess>>) => {
    const settled = await Promise.allSettled(starts);
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed === undefined)
      return settled.map((result) => (result as PromiseFulfilledResult<ServiceProcess>).value);
    await closeAll('SIGKILL');
    throw failed.reason;
  };
  const tokenServices = await allStarted(
    (tokenPorts ?? [undefined]).map((p, i) =>
      spawn(
        'token-service',
        replicaName('token-service', i),
        p === undefined ? {} : { PORT: String(p.port), INTERNAL_PORT: String(p.internalPort) },
      ),
    ),
  );
  const nextStoreName = () => replicaName('plant-store', platform.plantStores.length);
  /** Replaces `old` by `next` wherever the platform lists it. */
  const replace = (old: ServiceProcess, next: ServiceProcess) => {
    for (const list of [platform.tokenServices, platform.plantStores, platform.accountAdmins]) {
      const i = list.indexOf(old);
      if (i >= 0) list[i] = next;
    }
    platform.tokenService = platform.tokenServices[0]!;
    if (platform.accountAdmins.length > 0) platform.accountAdmin = platform.accountAdmins[0]!;
  };

  const platform: Platform = {
    ...platformAdmin({
      authUrl: `http://127.0.0.1:${tokenServicePort}`,
      publicAuthUrl: settings.authUrl,
      internalUrl: `http://127.0.0.1:${internalPort}`,
      internalApiToken: settings.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN,
      cliEnv: cliEnv(settings),
    }),
    databaseUrl,
    redisUrl: settings.redisUrl,
    ...(redis ? { redis } : {}),
    ...(postgres ? { postgres } : {}),
    authUrl: settings.authUrl,
    internalUrl: `http://127.0.0.1:${internalPort}`,
    portalUrl: `http://127.0.0.1:${portalPort}`,
    secrets: settings.secrets,
    tokenService: tokenServices[0]!,
    tokenServices,
    plantStores: [],
    accountAdmins: [],
    processes,
    envOf,
    async startPlantStore(env = {}) {
      const store = await spawn('plant-store', nextStoreName(), env);
      platform.plantStores.push(store);
      return store;
    },
    startTokenServiceReplica() {
      return spawn('token-service', 'token-service-replica', { PORT: '0', INTERNAL_PORT: '0' });
    },
    async restart(svc, signal = 'SIGTERM', { root } = {}) {
      await svc.stop(signal);
      if (root !== undefined) roots.set(svc.name, root);
      // Chosen ports (the token service's, account-admin's, `ports`) come back on the same address; other stores get a new one.
      const next = await spawn(svc.service, svc.name);
      replace(svc, next);
      return next;
    },
    async stopTokenService() {
      await platform.tokenService.stop();
    },
    async startTokenService() {
      replace(platform.tokenService, await spawn('token-service', 'token-service'));
    },
    close: (signal = 'SIGKILL') => closeAll(signal),
  };
  const started = await allStarted([
    ...Array.from({ length: plantStores }, (_, i) =>
      spawn(
        'plant-store',
        replicaName('plant-store', i),
        storePorts === undefined ? {} : { PORT: String(storePorts[i]) },
      ),
    ),
    ...portalPorts.map((port, i) =>
      spawn('account-admin', replicaName('account-admin', i), { PORT: String(port) }),
    ),
  ]);
  platform.plantStores.push(...started.slice(0, plantStores));
  platform.accountAdmins.push(...started.slice(plantStores));
  if (platform.accountAdmins.length > 0) platform.accountAdmin = platform.accountAdmins[0]!;
  return platform;
}
