#!/usr/bin/env node
// `pnpm bench:revocation [-- --iterations=300]`: how fast a revocation reaches every replica.
//
// Starts the token service and two Plant Store processes as production runs them (built JS,
// NODE_ENV=production) on the bench database and a redis-server of this run alone (so other
// work on the machine's Redis neither disturbs the figures nor receives our events). Then, many
// times: mint a token, use it once at both stores (it is now in their verified-token caches:
// the revocation check is the only thing that can refuse it), reset the account's secret or
// delete the account through the internal API (what the portal calls), and from the moment
// that API response has arrived, poll both stores back to back with the old token until each
// refuses it. Latency = arrival of the first 401 - arrival of the API response; it includes
// one poll round trip, so it is an upper bound. "stale" counts 200s answered after the API
// response (a correct system at target has almost none; each is a window of exposure).
//
// Target (docs/performance.md): p99 <= 50 ms at every replica. Peers that keep JWT access tokens valid
// until expiry (Keycloak, Auth0, Hydra) have the token lifetime, 300 s, as their figure.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import * as lib from '../lib/platform.mjs';
import {
  call,
  closeProbe,
  firstRefusal,
  latencySummary as summary,
} from '../lib/revocation-probe.mjs';
import { fmt, machine, table } from '../lib/report.mjs';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    iterations: { type: 'string', default: '300' },
    'delete-every': { type: 'string', default: '3' },
    'resync-ms': { type: 'string', default: '5000' },
  },
});
const ITERATIONS = Number(args.iterations);
const DELETE_EVERY = Number(args['delete-every']);
const TOKEN_LIFETIME_MS = 300_000;

async function main() {
  const missing = /** @type {const} */ (['token-service', 'plant-store']).filter((s) =>
    lib.missingServices().includes(s),
  );
  if (missing.length > 0)
    throw new Error(`build first (pnpm build): missing dist of ${missing.join(', ')}`);

  // One directory per run: two runs at once must not write into each other's log files.
  const logDir = join(
    lib.ROOT,
    'bench/results/logs',
    `revocation-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`,
  );
  await lib.migrate();
  const platform = await lib.startPlatform({
    logDir,
    plantStoreCount: 2,
    accountAdmin: false,
    ownRedis: true,
    resyncMs: Number(args['resync-ms']),
  });
  try {
    const { plantStores: stores } = platform;
    const tenant = await platform.createTenant('bench-rev');
    const resettable = [];
    for (let i = 0; i < 5; i += 1)
      resettable.push(await lib.createServiceAccount(platform, tenant, `reset-${i}`, 'View'));
    const started = performance.now();
    const samples = await measureRevocations(platform, tenant, resettable);
    const elapsedS = (performance.now() - started) / 1000;
    const figures = summarise(samples, stores);
    printReport(samples, figures, elapsedS);
    writeResults(samples, figures, stores.length);
  } finally {
    await lib.stopPlatform(platform);
    closeProbe();
  }
}

/**
 * Many times: mint a token, use it once at every store, reset or delete its account through
 * the internal API, then time each store's first refusal of the old token.
 * @param {any} platform @param {string} tenant @param {any[]} resettable
 */
async function measureRevocations(platform, tenant, resettable) {
  const stores = platform.plantStores;
  const samples = [];
  for (let i = 0; i < ITERATIONS; i += 1) {
    const op = DELETE_EVERY > 0 && i % DELETE_EVERY === DELETE_EVERY - 1 ? 'delete' : 'reset';
    const account =
      op === 'delete'
        ? await lib.createServiceAccount(platform, tenant, `del-${i}`, 'View')
        : resettable[i % resettable.length];
    const token = await lib.grantToken(platform, tenant, account);
    await warmStores(stores, token);
    const sent = performance.now();
    const answer = await revoke(platform, tenant, op, account);
    const refusals = await Promise.all(
      stores.map((/** @type {any} */ store) => firstRefusal(store, token, answer.at)),
    );
    samples.push({ op, apiMs: answer.at - sent, stores: refusals });
  }
  return samples;
}

/**
 * The token used once at every store: it is now in their verified-token caches, so only the
 * revocation check can refuse it.
 * @param {any[]} stores @param {string} token
 */
async function warmStores(stores, token) {
  for (const store of stores) {
    const warm = await call(`${store.url}/plants?limit=1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (warm.status !== 200)
      throw new Error(`${store.name} refused a fresh token: ${warm.status} ${warm.body}`);
  }
}

/**
 * Resets the account's secret or deletes it through the internal API, as the portal does.
 * @param {any} platform @param {string} tenant @param {'reset' | 'delete'} op @param {any} account
 */
async function revoke(platform, tenant, op, account) {
  const internal = `${platform.tokenService.internalUrl}/internal/v1/realms/${tenant}/service-accounts`;
  const headers = {
    authorization: `Bearer ${lib.INTERNAL_API_TOKEN}`,
    'content-type': 'application/json',
  };
  if (op === 'delete') {
    const answer = await call(`${internal}/${account.client_id}`, { method: 'DELETE', headers });
    if (answer.status !== 204) throw new Error(`delete answered ${answer.status}`);
    return answer;
  }
  const answer = await call(`${internal}/${account.client_id}/reset-secret`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ actor: 'bench' }),
  });
  if (answer.status !== 200) throw new Error(`reset answered ${answer.status}`);
  account.secret = JSON.parse(answer.body).secret;
  return answer;
}

/** @param {string} name @param {string} op @param {ReturnType<typeof summary>} stats @param {string} stale */
const tableRow = (name, op, stats, stale) => [
  name,
  op,
  String(stats.n),
  fmt(stats.p50Ms, 2),
  fmt(stats.p95Ms, 2),
  fmt(stats.p99Ms, 2),
  fmt(stats.maxMs, 2),
  stale,
];

/**
 * Latencies per store and change, at every replica (the slowest store of each change), and
 * of the internal API itself.
 * @param {any[]} samples @param {any[]} stores
 */
function summarise(samples, stores) {
  const rows = [];
  /** @type {Record<string, ReturnType<typeof summary> & { stale: number }>} */
  const byStore = {};
  for (const [s, store] of stores.entries()) {
    for (const op of ['reset', 'delete', 'all']) {
      const chosen = samples.filter((x) => op === 'all' || x.op === op);
      if (chosen.length === 0) continue;
      const stats = {
        ...summary(chosen.map((x) => x.stores[s].latencyMs)),
        stale: chosen.reduce((n, x) => n + x.stores[s].stale, 0),
      };
      byStore[`${store.name}/${op}`] = stats;
      rows.push(tableRow(store.name, op, stats, String(stats.stale)));
    }
  }
  const everyReplica = summary(
    samples.map((x) => Math.max(...x.stores.map((/** @type {any} */ r) => r.latencyMs))),
  );
  rows.push(tableRow('every replica', 'all', everyReplica, ''));
  const api = summary(samples.map((x) => x.apiMs));
  return { rows, byStore, everyReplica, api };
}

/** @param {any[]} samples @param {ReturnType<typeof summarise>} figures @param {number} elapsedS */
function printReport(samples, { rows, everyReplica, api }, elapsedS) {
  console.log(
    `\nRevocation propagation: ${samples.length} changes (${samples.filter((x) => x.op === 'reset').length} resets, ${samples.filter((x) => x.op === 'delete').length} deletes) in ${elapsedS.toFixed(1)} s`,
  );
  console.log(
    'ms from the internal API response to the first 401 (upper bound: includes one poll round trip)\n',
  );
  console.log(
    table(['replica', 'change', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'stale 200s'], rows),
  );
  console.log(
    `\ninternal API (reset/delete) latency: p50 ${fmt(api.p50Ms, 2)} ms, p99 ${fmt(api.p99Ms, 2)} ms`,
  );
  console.log(
    `target: p99 <= 50 ms at every replica -> ${everyReplica.p99Ms <= 50 ? 'met' : 'NOT met'} (${fmt(everyReplica.p99Ms, 2)} ms)`,
  );
  console.log(
    `reference: peers with JWT access tokens (Keycloak, Auth0, Hydra) keep a revoked token valid until expiry: ${TOKEN_LIFETIME_MS} ms`,
  );
}

/** @param {any[]} samples @param {ReturnType<typeof summarise>} figures @param {number} plantStores */
function writeResults(samples, { byStore, everyReplica, api }, plantStores) {
  const resultsDir = join(lib.ROOT, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(
    resultsDir,
    `revocation-${new Date()
      .toISOString()
      .replace(/[:.]/g, '-')
      .replace(/-\d{3}Z$/, 'Z')}.json`,
  );
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        benchmark: 'revocation',
        date: new Date().toISOString(),
        machine: machine(),
        settings: {
          iterations: ITERATIONS,
          deleteEvery: DELETE_EVERY,
          resyncMs: Number(args['resync-ms']),
          plantStores,
          redis: 'dedicated redis-server',
        },
        targetP99Ms: 50,
        targetMet: everyReplica.p99Ms <= 50,
        referenceMs: { peersTokenLifetime: TOKEN_LIFETIME_MS },
        everyReplica,
        byStore,
        internalApi: api,
        samples,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwritten ${file.slice(lib.ROOT.length + 1)}`);
}

main().catch((err) => {
  console.error(`bench:revocation failed: ${err?.message ?? err}`);
  process.exit(1);
});
