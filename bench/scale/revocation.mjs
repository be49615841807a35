// bench:scale, revocation: principals revoked long ago (deleted or reset more than a token
// lifetime before), at three sizes, beside 1,000 live accounts. The history is seeded with SQL
// as the token-version trigger would have recorded it; the token service is restarted after
// each size (it prunes at start, as every replica does each minute) and both Plant Stores too
// (each loads the snapshot afresh). Then, per size: the snapshot's size, the map entries, reset →
// refusal at both, and once all is quiet, the bytes per resync and the Plant Stores' CPU.
import { setTimeout as sleep } from 'node:timers/promises';
import * as lib from '../lib/platform.mjs';
import { cpuSeconds } from '../lib/processes.mjs';
import { call, firstRefusal, latencySummary } from '../lib/revocation-probe.mjs';
import { inParallel, metricOf, ratio, target } from './measure.mjs';
import { seedRevokedHistory } from './seed.mjs';

/** Older than the token lifetime (300 s) plus the margin (60 s), by ten minutes. */
const HISTORY_AGE_SECONDS = 300 + 60 + 600;
const LIVE_TENANTS = 40;
const ACCOUNTS_PER_TENANT = 25;

/**
 * @param {{platform: import('../lib/platform.mjs').Platform, db: import('pg').Client, log: (msg: string) => void, quick: boolean}} ctx
 * @param {number[]} sizes
 */
export async function revocationAtScale({ platform, db, log, quick }, sizes) {
  const liveTenants = quick ? 4 : LIVE_TENANTS;
  log(
    `revocation: ${liveTenants} tenants with the operator CLI, ${liveTenants * ACCOUNTS_PER_TENANT} live service accounts through the internal API`,
  );
  const tenants = await inParallel(liveTenants, 4, () => platform.createTenant('live'));
  const live = await inParallel(liveTenants * ACCOUNTS_PER_TENANT, 8, async (i) => {
    const tenant = /** @type {string} */ (tenants[i % liveTenants]);
    return { tenant, ...(await platform.createServiceAccount(tenant, { name: `live-${i}` })) };
  });
  const history = await platform.createTenant('history');
  const credential = platform.envOf('plant-store').INTERNAL_API_TOKEN ?? '';

  /** @type {any[]} */
  const rows = [];
  let seeded = 0;
  for (const size of sizes) {
    log(`revocation: ${size} principals revoked long ago`);
    await seedRevokedHistory(db, history, seeded, size, HISTORY_AGE_SECONDS);
    const added = size - seeded;
    seeded = size;
    const oldDesignEntries = Number(
      (
        await db.query(
          `select count(*) from auth.principals where (token_version > 1 and deleted_at is null) or deleted_at > now() - interval '360 seconds'`,
        )
      ).rows[0].count,
    );
    const storedBefore = await storeRows(db);
    await platform.restart(platform.tokenService);
    await waitFor(
      async () => (await storeRows(db)).changes <= storedBefore.changes - added,
      'the token service to prune the history',
      60_000,
    );
    const storedAfter = await storeRows(db);
    for (const store of [...platform.plantStores]) await platform.restart(store);
    await waitFor(
      async () =>
        (await Promise.all(platform.plantStores.map((s) => metricOf(s, 'revocation_live')))).every(
          (v) => v === 1,
        ),
      'the stores to be live',
      30_000,
    );

    const snapshot = await call(`${platform.internalUrl}/internal/v1/revocations`, {
      headers: { authorization: `Bearer ${credential}` },
    });
    const entries = await metricOf(
      /** @type {{url: string, managementUrl?: string}} */ (platform.plantStores[0]),
      'revocation_map_entries',
    );
    // Ten changes first, not counted: the path warmed after the restarts, as in a running system.
    await resetToRefusal(platform, live.slice(0, 5), 10);
    const propagation = await resetToRefusal(platform, live.slice(0, 5), quick ? 20 : 100);
    // The quiet stretch once the restarted processes have settled (start-up compilation and
    // garbage would count otherwise) and the last change has been read.
    await sleep(5000);
    const quiet = await quietStretch(platform.plantStores, quick ? 6 : 30);
    rows.push({
      size,
      liveAccounts: live.length,
      oldDesignSnapshotEntries: oldDesignEntries,
      storeRowsBeforePruning: storedBefore,
      storeRowsAfterPruning: storedAfter,
      snapshotBytes: Buffer.byteLength(snapshot.body),
      bytesPerQuietResync: quiet.bytesPerResync,
      resyncsInStretch: quiet.resyncs,
      cpuMsPerMinute: quiet.cpuMsPerMinute,
      mapEntries: entries,
      revocationP99Ms: propagation.p99Ms,
      revocation: propagation,
    });
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  return {
    rows,
    targets: [
      target(
        `revocation bytes per quiet resync at ${last.size} revoked / at ${first.size}`,
        ratio(last.bytesPerQuietResync, first.bytesPerQuietResync),
        1.2,
        '<=',
      ),
      target(
        `Plant Store CPU per minute on revocation at ${last.size} revoked / at ${first.size}`,
        ratio(last.cpuMsPerMinute, first.cpuMsPerMinute),
        1.2,
        '<=',
      ),
      ...rows.map((row) =>
        target(
          `revocation p99 ms (reset → refusal at 2 replicas) at ${row.size} revoked`,
          row.revocationP99Ms,
          10,
          '<=',
        ),
      ),
    ],
  };
}

/** @param {import('pg').Client} db */
async function storeRows(db) {
  const { rows } = await db.query(
    'select (select count(*) from auth.revocation_changes) as changes, (select count(*) from auth.principals) as principals',
  );
  return { changes: Number(rows[0].changes), principals: Number(rows[0].principals) };
}

/**
 * @param {() => Promise<boolean>} check
 * @param {string} what
 * @param {number} timeoutMs
 */
async function waitFor(check, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/**
 * The Plant Stores doing nothing but their periodic resyncs for `seconds`: body bytes per
 * change-feed resync, and their CPU time (average of the stores) per minute.
 * @param {import('../lib/processes.mjs').ServerProcess[]} stores
 * @param {number} seconds
 */
async function quietStretch(stores, seconds) {
  const read = () =>
    Promise.all(
      stores.map(async (s) => ({
        bytes: await metricOf(s, 'revocation_resync_bytes_total', { kind: 'changes' }),
        resyncs: await metricOf(s, 'revocation_resync_requests_total', { kind: 'changes' }),
        cpu: cpuSeconds(s.pid),
      })),
    );
  const before = await read();
  await sleep(seconds * 1000);
  const after = await read();
  const bytes = after.reduce(
    (n, a, i) => n + a.bytes - /** @type {{bytes: number}} */ (before[i]).bytes,
    0,
  );
  const resyncs = after.reduce(
    (n, a, i) => n + a.resyncs - /** @type {{resyncs: number}} */ (before[i]).resyncs,
    0,
  );
  const cpu =
    after.reduce((n, a, i) => n + a.cpu - /** @type {{cpu: number}} */ (before[i]).cpu, 0) /
    stores.length;
  return {
    bytesPerResync: resyncs > 0 ? bytes / resyncs : null,
    resyncs,
    cpuMsPerMinute: (cpu * 1000 * 60) / seconds,
  };
}

/**
 * Reset → refusal at every Plant Store, `iterations` times over `accounts` in turn: the ms from
 * the reset's API answer to each store's first 401 (the slower store counts).
 * @param {import('../lib/platform.mjs').Platform} platform
 * @param {{tenant: string, clientId: string, secret: string}[]} accounts
 * @param {number} iterations
 */
async function resetToRefusal(platform, accounts, iterations) {
  const headers = {
    authorization: `Bearer ${lib.INTERNAL_API_TOKEN}`,
    'content-type': 'application/json',
  };
  /** @type {number[]} */
  const latencies = [];
  let stale = 0;
  for (let i = 0; i < iterations; i++) {
    const account = /** @type {{tenant: string, clientId: string, secret: string}} */ (
      accounts[i % accounts.length]
    );
    const { tenant } = account;
    const token = await platform.grantToken(tenant, account);
    for (const store of platform.plantStores) {
      const warm = await call(`${store.url}/plants?limit=1`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (warm.status !== 200)
        throw new Error(`${store.name} refused a fresh token: ${warm.status}`);
    }
    const answer = await call(
      `${platform.internalUrl}/internal/v1/realms/${tenant}/service-accounts/${account.clientId}/reset-secret`,
      { method: 'POST', headers, body: '{"actor":"bench"}' },
    );
    if (answer.status !== 200) throw new Error(`reset answered ${answer.status}`);
    account.secret = JSON.parse(answer.body).secret;
    const refusals = await Promise.all(
      platform.plantStores.map((store) => firstRefusal(store, token, answer.at)),
    );
    latencies.push(Math.max(...refusals.map((r) => r.latencyMs)));
    stale += refusals.reduce((n, r) => n + r.stale, 0);
  }
  return { ...latencySummary(latencies), stale };
}
