// What `pnpm bench` and `pnpm bench:soak` both do before loading: migrate the bench
// database, start the platform, create a fresh tenant with the operator CLI and the service
// accounts through the internal API, seed the plants; and undo it afterwards.
import { USER_PASSWORD } from '@plant/test-kit';
import {
  clearThrottleState,
  connect,
  createServiceAccount,
  dropPlants,
  ensureBaselineTable,
  migrate,
  seedPlants,
  startPlatform,
  stopPlatform,
} from './platform.mjs';

/**
 * @typedef {{client_id: string, secret: string}} Account
 * @typedef {object} BenchSession
 * @property {import('./platform.mjs').Platform} platform
 * @property {string} tenant
 * @property {Record<string, Account>} accounts
 * @property {{tenant: string, accounts: Record<string, Account>}} [es256]  a second tenant, signing ES256, with the same accounts and plants
 * @property {import('pg').Client} db
 * @property {() => Promise<void>} close
 */

/**
 * @param {{stamp: string, logDir: string, plantStoreCount?: number, nodeArgs?: (name: string) => string[], accounts: Record<string, 'View' | 'Edit'>, plants: number, log: (msg: string) => void, logLevel?: string, es256?: boolean, serviceEnv?: Record<string, Record<string, string>>, node?: string}} options
 *   `node`: the services' node binary (default: this process's)
 * @returns {Promise<BenchSession>}
 */
export async function openSession({
  stamp,
  logDir,
  plantStoreCount = 1,
  nodeArgs,
  accounts: roles,
  plants,
  log,
  logLevel = 'info',
  es256 = false,
  serviceEnv,
  node,
}) {
  await migrate();
  const cleared = await clearThrottleState();
  if (cleared > 0)
    log(`cleared ${cleared} failed-authentication counters from the bench Redis database`);
  const db = await connect();
  const tenant = `bench-${stamp.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
  /** @type {import('./platform.mjs').Platform} */
  let platform;
  const starting = startPlatform({
    logDir,
    plantStoreCount,
    logLevel,
    ...(nodeArgs ? { nodeArgs } : {}),
    ...(serviceEnv ? { serviceEnv } : {}),
    ...(node ? { node } : {}),
  });
  try {
    await Promise.all([ensureBaselineTable(db), starting]);
    platform = await starting;
    await platform.createTenant('bench', tenant);
    if (es256)
      await platform.cli(
        'tenant',
        'create',
        `${tenant}-es256`,
        '--admin-email',
        `admin@${tenant}-es256.test`,
        '--admin-password',
        USER_PASSWORD,
        '--alg',
        'ES256',
      );
  } catch (err) {
    await starting.then(stopPlatform, () => undefined);
    await db.end();
    throw err;
  }
  const close = async () => {
    await stopPlatform(platform);
    await dropPlants(db, tenant).catch(() => undefined);
    if (es256) await dropPlants(db, `${tenant}-es256`).catch(() => undefined);
    await db.end();
  };
  try {
    log(
      `platform up (tenant ${tenant}); seeding ${plants} plants and ${Object.keys(roles).length} service accounts`,
    );
    /** @type {Record<string, Account>} */
    const accounts = {};
    for (const [key, role] of Object.entries(roles))
      accounts[key] = await createServiceAccount(platform, tenant, `bench-${key}`, role);
    await seedPlants(db, tenant, plants);
    if (!es256) return { platform, tenant, accounts, db, close };
    /** @type {Record<string, Account>} */
    const es256Accounts = {};
    for (const [key, role] of Object.entries(roles))
      es256Accounts[key] = await createServiceAccount(
        platform,
        `${tenant}-es256`,
        `bench-${key}`,
        role,
      );
    await seedPlants(db, `${tenant}-es256`, plants);
    return {
      platform,
      tenant,
      accounts,
      es256: { tenant: `${tenant}-es256`, accounts: es256Accounts },
      db,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
