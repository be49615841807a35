#!/usr/bin/env node
// `pnpm bench:restart [-- --runs=7]`: how soon a restarted replica of each service is ready and
// serving, as a rolling update restarts it (SIGTERM, then a new process at the same address).
// For each service, `runs` restarts; each measures from the new process's spawn to its first
// `/readyz` 200 on the management port and to its first served request on the public port
// (Plant Store: GET /plants with a token; token service: a client credentials grant;
// account-admin: the portal's first page), polled every 5 ms from the moment of the spawn, and
// the CPU seconds the process had used when it was ready; and, from its `listening` line, when
// its modules had loaded and when it listened (ms from the process's own start). The baseline,
// measured in the same run the same way, is a bare Node process answering on one http
// listener: the floor of any start.
// Prints a table, and writes bench/results/<date>-restart.json. Build first (`pnpm build`).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@plant/test-kit';
import { grantBody, missingServices, ROOT, tokenPath } from './lib/platform.mjs';
import { cpuSeconds, startServer } from './lib/processes.mjs';
import { fmt, machine, table } from './lib/report.mjs';
import { openSession } from './lib/session.mjs';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: { runs: { type: 'string', default: '7' } },
});
const RUNS = Number(args.runs);
const log = (/** @type {string} */ msg) => process.stderr.write(`[bench:restart] ${msg}\n`);
if (missingServices().length > 0)
  throw new Error(`build first (pnpm build): missing ${missingServices().join(', ')}`);

/** Polls `probe` every 5 ms until it is true; resolves with the moment (epoch ms) it was. @param {() => Promise<boolean>} probe */
async function firstSuccess(probe, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return Date.now();
    await sleep(5);
  }
  throw new Error('not ready within 30 s');
}

/** @param {string} url @param {RequestInit} [init] */
const answers200 = (url, init = {}) =>
  fetch(url, { ...init, signal: AbortSignal.timeout(2000) }).then(async (res) => {
    await res.arrayBuffer();
    return res.status === 200;
  });

const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;

const stamp = new Date()
  .toISOString()
  .replace(/[:.]/g, '-')
  .replace(/-\d{3}Z$/, 'Z');
const logDir = join(ROOT, 'bench/results/logs', `${stamp}-restart`);
// Every port fixed before the start, the management ports included: the probes of a new
// process can then be polled from the instant it is spawned, not from when its log says it listens.
const ports = {
  store: await freePort(),
  storeManagement: await freePort(),
  tokenManagement: await freePort(),
  adminManagement: await freePort(),
};
const session = await openSession({
  stamp,
  logDir,
  accounts: { reader: 'View' },
  plants: 10,
  log,
  serviceEnv: {
    'plant-store': { PORT: String(ports.store), MANAGEMENT_PORT: String(ports.storeManagement) },
    'token-service': { MANAGEMENT_PORT: String(ports.tokenManagement) },
    'account-admin': { MANAGEMENT_PORT: String(ports.adminManagement) },
  },
});
const { platform, tenant, accounts } = session;
const reader = accounts.reader;
if (reader === undefined) throw new Error('no reader account');
const token = await platform.grantToken(tenant, {
  clientId: reader.client_id,
  secret: reader.secret,
});
const grant = {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: grantBody(reader.client_id, reader.secret),
};

/** @type {Record<string, {current: () => import('@plant/test-kit').ServiceProcess, served: (svc: import('@plant/test-kit').ServiceProcess) => Promise<boolean>}>} */
const SERVICES = {
  'plant-store': {
    current: () => platform.plantStores[0],
    served: (svc) =>
      answers200(`${svc.url}/plants?limit=1`, { headers: { authorization: `Bearer ${token}` } }),
  },
  'token-service': {
    current: () => platform.tokenService,
    served: (svc) => answers200(`${svc.url}${tokenPath(tenant)}`, grant),
  },
  'account-admin': {
    current: () => /** @type {any} */ (platform.accountAdmin),
    served: (svc) => answers200(`${svc.url}/`),
  },
};

/** One restart: stop, spawn, and the two probes polled from the spawn on. */
async function restartOnce(/** @type {string} */ name) {
  const service = SERVICES[name];
  const old = service.current();
  const { url, managementUrl } = old;
  await old.stop('SIGTERM');
  const spawning = platform.restart(old, 'SIGTERM');
  const readyAt = firstSuccess(() => answers200(`${managementUrl}/readyz`));
  const servedAt = firstSuccess(() => service.served({ ...old, url }));
  const next = await spawning;
  const [ready, served] = [await readyAt, await servedAt];
  return {
    ...startupOf(next.logs),
    readyMs: ready - next.spawnedAt,
    servedMs: served - next.spawnedAt,
    cpuSecondsAtReady: cpuSeconds(next.pid),
  };
}

/**
 * What the process says of its own start on its `listening` line (ms from its start: its
 * modules loaded, both listeners up); the rest of the way to ready is the readiness checks.
 * @param {string[]} logs
 */
function startupOf(logs) {
  const line = logs.find((l) => l.includes('"msg":"listening"'));
  const startup = line === undefined ? undefined : JSON.parse(line).startup;
  return { loadedMs: startup?.loadedMs ?? NaN, listeningMs: startup?.listeningMs ?? NaN };
}

/** The baseline's restart, measured the same way. */
async function baselineOnce() {
  const port = await freePort();
  const pending = startServer({
    name: 'baseline-bare-http',
    script: join(ROOT, 'bench/baselines/bare-http-server.mjs'),
    env: { PORT: String(port) },
    logDir,
  });
  const servedAt = await firstSuccess(() => answers200(`http://127.0.0.1:${port}/`));
  const server = await pending;
  const result = {
    loadedMs: NaN,
    listeningMs: NaN,
    readyMs: servedAt - server.spawnedAt,
    servedMs: servedAt - server.spawnedAt,
    cpuSecondsAtReady: cpuSeconds(server.pid),
  };
  await server.stop('SIGTERM');
  return result;
}

const loadBefore = loadavg()[0] ?? NaN;
/** @type {Record<string, Array<{loadedMs: number, listeningMs: number, readyMs: number, servedMs: number, cpuSecondsAtReady: number}>>} */
const results = { baseline: [], 'plant-store': [], 'token-service': [], 'account-admin': [] };
try {
  for (let run = 0; run < RUNS; run++) {
    // Interleaved, so a burst of other work on the machine moves every service alike.
    results.baseline.push(await baselineOnce());
    for (const name of Object.keys(SERVICES)) {
      results[name].push(await restartOnce(name));
      await sleep(300);
    }
    log(`run ${run + 1}/${RUNS}: load average ${loadavg()[0]?.toFixed(2)}`);
  }
} finally {
  await session.close();
}
const loadAfter = loadavg()[0] ?? NaN;

const floor = median(results.baseline.map((r) => r.readyMs));
const summary = Object.fromEntries(
  Object.entries(results).map(([name, rs]) => {
    const ready = median(rs.map((r) => r.readyMs));
    return [
      name,
      {
        loadedMs: median(rs.map((r) => r.loadedMs)),
        listeningMs: median(rs.map((r) => r.listeningMs)),
        readyMs: ready,
        servedMs: median(rs.map((r) => r.servedMs)),
        maxServedMs: Math.max(...rs.map((r) => r.servedMs)),
        cpuSecondsAtReady: median(rs.map((r) => r.cpuSecondsAtReady)),
        readyOverBaseline: ready / floor,
      },
    ];
  }),
);
const rows = Object.entries(summary).map(([name, s]) => [
  name,
  fmt(s.loadedMs),
  fmt(s.listeningMs),
  fmt(s.readyMs),
  fmt(s.servedMs),
  fmt(s.maxServedMs),
  fmt(s.cpuSecondsAtReady, 2),
  fmt(s.readyOverBaseline, 1),
]);
process.stdout.write(
  `\nrestart to ready and serving, median of ${RUNS} (load average ${fmt(loadBefore, 2)} before, ${fmt(loadAfter, 2)} after)\n`,
);
process.stdout.write(
  `${table(['process', 'modules loaded ms', 'listening ms', 'ready ms', 'served ms', 'max served ms', 'CPU s at ready', 'ready / baseline'], rows)}\n`,
);
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
const file = join(ROOT, 'bench/results', `${stamp}-restart.json`);
writeFileSync(
  file,
  `${JSON.stringify({ at: new Date().toISOString(), machine: { ...machine(), loadAverage1mBefore: loadBefore, loadAverage1mAfter: loadAfter }, runs: RUNS, summary, results }, null, 2)}\n`,
);
log(`wrote ${file}`);
