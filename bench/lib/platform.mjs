// The platform as production runs it, on this machine: built JS, NODE_ENV=production,
// LOG_LEVEL=info, one process per service, ephemeral ports, against a bench database
// (never the development or test one). Plus the seeding every scenario needs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { freePort, runNode, startServer } from './processes.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
export const SERVICES = /** @type {const} */ (['token-service', 'plant-store', 'account-admin']);

export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/plantstore_bench';
// Its own Redis database by default: the test suites share database 0 and leave failure
// counters there for 127.0.0.1 (see clearThrottleState).
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/7';
const AUTH_URL = 'http://localhost:8082';
const PLANT_STORE_AUDIENCE = 'http://localhost:8081';
const ADMIN_PASSWORD = 'bench-admin-password-not-secret';

/** Clearly fake secrets: the bench database holds nothing of value. */
export const INTERNAL_API_TOKEN = 'bench-internal-token-not-for-production';
const SECRETS = {
  INTERNAL_API_TOKEN,
  SECRET_PEPPER: 'bench-pepper-not-for-production-0123456789',
  KEY_ENCRYPTION_KEY: 'YmVuY2gta2V5LWVuY3J5cHRpb24ta2V5LTMyLWJ5dGU=',
  SESSION_SECRET: 'bench-session-secret-not-for-production',
  COOKIE_KEYS: 'bench-cookie-key-not-for-production-0001',
};

/** Environment of every service process. */
export function serviceEnv(extra = {}) {
  return {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL,
    REDIS_URL,
    AUTH_URL,
    PLANT_STORE_AUDIENCE,
    ...SECRETS,
    ...extra,
  };
}

/** @param {string} service */
export function distOf(service, file = 'start.js') {
  return join(ROOT, 'services', service, 'dist', file);
}

/** Names of the services whose built entry point is missing. */
export function missingServices() {
  return SERVICES.filter((s) => !existsSync(distOf(s)) || !existsSync(distOf(s, 'migrate.js')));
}

/** Creates the bench database if needed and applies every service's migrations. */
export async function migrate() {
  // The first creates the database (the others tolerate the race); each has its own schema.
  const services = SERVICES.filter((service) => existsSync(distOf(service, 'migrate.js')));
  const [first, ...rest] = services;
  if (first) await runNode(distOf(first, 'migrate.js'), [], serviceEnv());
  await Promise.all(rest.map((service) => runNode(distOf(service, 'migrate.js'), [], serviceEnv())));
}

/**
 * @typedef {import('./processes.mjs').ServerProcess} ServerProcess
 * @typedef {{tokenService: ServerProcess, plantStores: ServerProcess[], accountAdmin: ServerProcess | undefined}} Platform
 */

/**
 * Starts the token service, then `plantStoreCount` Plant Stores and account-admin (they need
 * its internal URL).
 * @param {{logDir: string, plantStoreCount?: number, nodeArgs?: (name: string) => string[], logLevel?: string}} options
 * @returns {Promise<Platform>}
 */
export async function startPlatform({ logDir, plantStoreCount = 1, nodeArgs = () => [], logLevel = 'info' }) {
  const level = { LOG_LEVEL: logLevel };
  // Below info the `listening` line is not written: choose the ports and wait on /healthz instead.
  const fixedPorts = !['trace', 'debug', 'info'].includes(logLevel);
  /** @returns {Promise<{ports?: {port: number, internalPort?: number}, env: Record<string, string>}>} */
  const portsFor = async (/** @type {boolean} */ internal) => {
    if (!fixedPorts) return { env: internal ? { INTERNAL_PORT: '0' } : {} };
    const port = await freePort();
    const internalPort = internal ? await freePort() : undefined;
    return {
      ports: { port, ...(internalPort ? { internalPort } : {}) },
      env: { PORT: String(port), ...(internalPort ? { INTERNAL_PORT: String(internalPort) } : {}) },
    };
  };
  const tokenPorts = await portsFor(true);
  const tokenService = await startServer({
    name: 'token-service',
    script: distOf('token-service'),
    env: serviceEnv({ ...tokenPorts.env, ...level }),
    logDir,
    nodeArgs: nodeArgs('token-service'),
    ...(tokenPorts.ports ? { ports: tokenPorts.ports } : {}),
  });
  const internal = { TOKEN_SERVICE_INTERNAL_URL: /** @type {string} */ (tokenService.internalUrl), ...level };
  /**
   * @param {string} name
   * @param {string} service
   */
  const start = async (name, service) => {
    const own = await portsFor(false);
    return startServer({ name, script: distOf(service), env: serviceEnv({ ...internal, ...own.env }), logDir, nodeArgs: nodeArgs(service), ...(own.ports ? { ports: own.ports } : {}) });
  };
  const started = await Promise.allSettled([
    ...Array.from({ length: plantStoreCount }, (_, i) => start(i === 0 ? 'plant-store' : `plant-store-${i + 1}`, 'plant-store')),
    existsSync(distOf('account-admin')) ? start('account-admin', 'account-admin') : Promise.resolve(undefined),
  ]);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all([tokenService, ...started.map((s) => (s.status === 'fulfilled' ? s.value : undefined))].map((p) => p?.stop()));
    throw /** @type {PromiseRejectedResult} */ (failed).reason;
  }
  const values = started.map((s) => /** @type {PromiseFulfilledResult<ServerProcess | undefined>} */ (s).value);
  return {
    tokenService,
    plantStores: /** @type {ServerProcess[]} */ (values.slice(0, plantStoreCount)),
    accountAdmin: values[plantStoreCount],
  };
}

/** @param {Platform} platform */
export async function stopPlatform(platform) {
  await Promise.all([...platform.plantStores, platform.accountAdmin].map((p) => p?.stop()));
  await platform.tokenService.stop();
}

/** @returns {Record<string, string>} */
function internalHeaders() {
  return { authorization: `Bearer ${INTERNAL_API_TOKEN}`, 'content-type': 'application/json' };
}

/**
 * @param {string} url
 * @param {RequestInit} init
 */
async function call(url, init) {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url.replace(/\/\/[^/]+/, '//…')} answered ${res.status}: ${text.slice(0, 300)}`);
  return text === '' ? undefined : JSON.parse(text);
}

/**
 * Creates a realm with the operator CLI, as an operator would.
 * @param {string} tenant
 */
export async function createTenant(tenant) {
  await runNode(distOf('token-service', 'cli.js'), ['tenant', 'create', tenant, '--admin-email', `admin@${tenant}.bench`, '--admin-password', ADMIN_PASSWORD], serviceEnv());
}

/**
 * A service account through the internal API (what the portal does), with the given role.
 * @param {Platform} platform
 * @param {string} tenant
 * @param {string} name
 * @param {'View' | 'Edit'} role
 * @returns {Promise<{client_id: string, secret: string}>}
 */
export async function createServiceAccount(platform, tenant, name, role) {
  const base = `${platform.tokenService.internalUrl}/internal/v1/realms/${tenant}/service-accounts`;
  const created = await call(base, { method: 'POST', headers: internalHeaders(), body: JSON.stringify({ name, actor: 'bench' }) });
  if (role !== 'View') {
    await call(`${base}/${created.client_id}`, { method: 'PATCH', headers: internalHeaders(), body: JSON.stringify({ role, actor: 'bench' }) });
  }
  return { client_id: created.client_id, secret: created.secret };
}

/**
 * @param {Platform} platform
 * @param {string} tenant
 * @param {string} clientId
 */
export async function resetSecret(platform, tenant, clientId) {
  const url = `${platform.tokenService.internalUrl}/internal/v1/realms/${tenant}/service-accounts/${clientId}/reset-secret`;
  return call(url, { method: 'POST', headers: internalHeaders(), body: JSON.stringify({ actor: 'bench' }) });
}

/**
 * The token endpoint path of a realm.
 * @param {string} tenant
 */
export function tokenPath(tenant) {
  return `/realms/${tenant}/protocol/openid-connect/token`;
}

/**
 * The client_secret_post body of a client credentials grant.
 * @param {string} clientId
 * @param {string} secret
 */
export function grantBody(clientId, secret) {
  return new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString();
}

/**
 * @param {Platform} platform
 * @param {string} tenant
 * @param {{client_id: string, secret: string}} account
 * @returns {Promise<string>}
 */
export async function grantToken(platform, tenant, account) {
  const body = await call(`${platform.tokenService.url}${tokenPath(tenant)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: grantBody(account.client_id, account.secret),
  });
  return body.access_token;
}

/** @param {string} tenant */
export function issuerOf(tenant) {
  return `${AUTH_URL}/realms/${tenant}`;
}
export { PLANT_STORE_AUDIENCE };

/**
 * Deletes the token service's failed-authentication counters from the bench Redis database.
 * A counter for 127.0.0.1 (left by a test suite or an earlier run within the 15-minute
 * window) makes every bench grant, all from that address, ask Redis before its secret is
 * compared, as the throttle must for a suspect source: a run then measures that path (0.78×
 * instead of 0.93× here) rather than a clean client's. Only those keys are deleted.
 * @returns {Promise<number>} how many were there
 */
export async function clearThrottleState() {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let deleted = 0;
    // The prefix of every counter of services/token-service/src/data-access/client-auth-failure-repository.ts.
    for await (const keys of redis.scanStream({ match: 'plantstore:auth-fail:*', count: 500 })) {
      if (keys.length > 0) deleted += await redis.del(...keys);
    }
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/** A client of the bench database (seeding and clean-up only; never a service's pool). */
export async function connect() {
  const client = new pg.Client({ connectionString: DATABASE_URL, application_name: 'bench' });
  await client.connect();
  return client;
}

/**
 * The baseline's table: the Plant Store's table shape (LIKE ... INCLUDING ALL copies columns,
 * defaults, checks and the primary key) in its own schema.
 * @param {pg.Client} db
 */
export async function ensureBaselineTable(db) {
  await db.query('create schema if not exists bench_baseline');
  await db.query('create table if not exists bench_baseline.plants (like plants.plants including all)');
}

/**
 * `count` plants with ids 1..count for `tenant`, in the Plant Store's table and the baseline's.
 * @param {pg.Client} db
 * @param {string} tenant
 * @param {number} count
 */
export async function seedPlants(db, tenant, count) {
  for (const table of ['plants.plants', 'bench_baseline.plants']) {
    await db.query(
      `insert into ${table} (tenant, id, name, tag)
       select $1, g, 'plant ' || g, (array['indoor', 'outdoor', 'succulent', null])[1 + g % 4]
       from generate_series(1, $2::int) g`,
      [tenant, count],
    );
  }
  await db.query('analyze plants.plants');
  await db.query('analyze bench_baseline.plants');
}

/**
 * Removes this run's rows (bench database only), so runs do not accumulate data.
 * @param {pg.Client} db
 * @param {string} tenant
 */
export async function dropPlants(db, tenant) {
  await db.query('delete from plants.plants where tenant = $1', [tenant]);
  await db.query('delete from bench_baseline.plants where tenant = $1', [tenant]);
}
