// The platform as production runs it, on this machine: built JS, NODE_ENV=production,
// LOG_LEVEL=info, one process per service (test-kit's launcher, output into log files),
// against a bench database (never the development or test one). Plus the seeding every
// scenario needs.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  migrateDatabase,
  PLANT_STORE_AUDIENCE,
  startPlatform as startProcesses,
} from '@plant/test-kit';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
export const SERVICES = /** @type {const} */ (['token-service', 'plant-store', 'account-admin']);

export const DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/plantstore_bench';
// Its own Redis database by default: the test suites share database 0 and leave failure
// counters there for 127.0.0.1 (see clearThrottleState).
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/7';
// AUTH_URL, the issuers' base: fixed, so a baseline is given a realm's issuer without asking the platform.
const AUTH_URL = 'http://localhost:8082';

/**
 * Fake secrets: the bench database holds nothing of value. They stay the same from run to run,
 * because the realms of earlier runs stay in the database with their keys encrypted; and they
 * are as strong as production requires (the services run with NODE_ENV=production), derived
 * from their names rather than written out.
 * @param {string} name
 */
const benchSecret = (name) =>
  createHash('sha256').update(`plant-store-bench:${name}`).digest('base64');
const SECRETS = {
  // The internal API: one credential per caller (the token service knows both).
  PLANT_STORE_INTERNAL_TOKEN: benchSecret('plant-store-internal-token'),
  ACCOUNT_ADMIN_INTERNAL_TOKEN: benchSecret('account-admin-internal-token'),
  SECRET_PEPPER: benchSecret('secret-pepper'),
  KEY_ENCRYPTION_KEY: 'YmVuY2gta2V5LWVuY3J5cHRpb24ta2V5LTMyLWJ5dGU=',
  SESSION_SECRET: benchSecret('session-secret'),
  COOKIE_KEYS: benchSecret('cookie-keys'),
};
/** account-admin's internal API credential: what the benchmarks manage service accounts with. */
export const INTERNAL_API_TOKEN = SECRETS.ACCOUNT_ADMIN_INTERNAL_TOKEN;

/** @param {string} service */
export function distOf(service, file = 'start.js') {
  return join(ROOT, 'services', service, 'dist', file);
}

/** Names of the services whose built entry point is missing. */
export function missingServices() {
  return SERVICES.filter((s) => !existsSync(distOf(s)) || !existsSync(distOf(s, 'migrate.js')));
}

/** Creates the bench database if needed and applies every service's migrations. */
export function migrate() {
  return migrateDatabase(DATABASE_URL);
}

/**
 * @typedef {import('@plant/test-kit').Platform} Platform
 */

/**
 * Starts the token service, then `plantStoreCount` Plant Stores and account-admin (when it is
 * built), on the bench database and Redis (`ownRedis`: a redis-server of the platform's own).
 * Issuers name the fixed AUTH_URL (the baselines are given it) unless `listenerIssuers`: then
 * they name where the token service listens, which account-admin's sign-in must reach.
 * `serviceEnv`: a service's environment over the platform's (fixed ports for a restart measure).
 * `node`: the node binary of the services (default: this process's).
 * @param {{logDir: string, plantStoreCount?: number, accountAdmin?: boolean, ownRedis?: boolean, resyncMs?: number, nodeArgs?: (name: string) => string[], logLevel?: string, listenerIssuers?: boolean, serviceEnv?: Record<string, Record<string, string>>, node?: string}} options
 * @returns {Promise<Platform>}
 */
export function startPlatform({
  logDir,
  plantStoreCount = 1,
  accountAdmin = existsSync(distOf('account-admin')),
  ownRedis = false,
  resyncMs,
  nodeArgs,
  logLevel = 'info',
  listenerIssuers = false,
  serviceEnv,
  node,
}) {
  return startProcesses({
    plantStores: plantStoreCount,
    accountAdmin,
    databaseUrl: DATABASE_URL,
    ...(ownRedis ? {} : { redisUrl: REDIS_URL }),
    ...(listenerIssuers ? {} : { authUrl: AUTH_URL }),
    secrets: SECRETS,
    env: { NODE_ENV: 'production', LOG_LEVEL: logLevel },
    logDir,
    ...(resyncMs === undefined ? {} : { resyncMs }),
    ...(nodeArgs === undefined ? {} : { nodeArgs }),
    ...(node === undefined ? {} : { node }),
    serviceEnv: withProductionBudgets(serviceEnv ?? {}),
  });
}

/** The test platform raises the budgets of sign-ins started per address; the bench runs production's (the services' defaults). */
const PRODUCTION_BUDGETS = { SIGN_IN_STARTS_PER_IP: '100' };

/** @param {Record<string, Record<string, string>>} serviceEnv */
function withProductionBudgets(serviceEnv) {
  return {
    ...serviceEnv,
    'token-service': { ...PRODUCTION_BUDGETS, ...serviceEnv['token-service'] },
    'account-admin': { ...PRODUCTION_BUDGETS, ...serviceEnv['account-admin'] },
  };
}

/**
 * Stops every process as production would (SIGTERM: they drain and flush their logs).
 * @param {Platform} platform
 */
export function stopPlatform(platform) {
  return platform.close('SIGTERM');
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
  const { clientId, secret } = await platform.createServiceAccount(tenant, { name, role });
  return { client_id: clientId, secret };
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
  return new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: secret,
  }).toString();
}

/**
 * @param {Platform} platform
 * @param {string} tenant
 * @param {{client_id: string, secret: string}} account
 * @returns {Promise<string>}
 */
export function grantToken(platform, tenant, account) {
  return platform.grantToken(tenant, { clientId: account.client_id, secret: account.secret });
}

/** @param {string} tenant */
export function issuerOf(tenant) {
  return `${AUTH_URL}/realms/${tenant}`;
}
export { PLANT_STORE_AUDIENCE };

/**
 * Deletes the token service's failed-authentication and failed-sign-in counters from the bench Redis database.
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
    // The prefixes of every counter of services/token-service/src/client-auth/client-auth-failure-repository.ts
    // and sign-in-failure-repository.ts, and of both services' budgets of sign-ins started (createSourceBudget).
    for (const match of [
      'plantstore:auth-fail:*',
      'plantstore:signin-fail:*',
      'plantstore:signin-start:*',
      'plantstore:portal-signin-start:*',
    ]) {
      for await (const keys of redis.scanStream({ match, count: 500 })) {
        if (keys.length > 0) deleted += await redis.del(...keys);
      }
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
  await db.query(
    'create table if not exists bench_baseline.plants (like plants.plants including all)',
  );
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

/**
 * The load spec of a client credentials grant (client_secret_post).
 * @param {string} url  the server's base URL
 * @param {string} path  its token endpoint (`tokenPath(tenant)` on ours)
 * @param {{client_id: string, secret: string}} account
 */
export function grantSpec(url, path, account) {
  return {
    url,
    method: 'POST',
    path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: grantBody(account.client_id, account.secret),
  };
}
