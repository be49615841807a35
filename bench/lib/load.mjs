// Runs load windows from the separate load-generator process and measures the servers
// around the measured part only (after each window's warm-up): CPU seconds of the server
// process and of its Postgres backends, from /proc. Ours and the baseline alternate
// (A B B A) so drift on a shared machine falls on both alike.
import { fileURLToPath } from 'node:url';
import {
  cpuSeconds,
  hostIdleSeconds,
  mainThreadCpuSeconds,
  runLoadGenerator,
} from './processes.mjs';

const CLIENT = fileURLToPath(new URL('../load/autocannon-client.mjs', import.meta.url));

/**
 * @typedef {object} Target
 * @property {Record<string, unknown>} spec  what the load generator sends (see autocannon-client.mjs)
 * @property {number[]} pids                 the server processes this load costs
 * @property {string} [dbApp]                application_name of its Postgres connections
 * @property {string} [generatorCpus]        the cores the load generator runs on (`taskset -c`); any when absent
 *
 * @typedef {object} Window
 * @property {number} requests
 * @property {number} ok
 * @property {number} durationSec
 * @property {number} errors
 * @property {Record<string, number>} statuses
 * @property {number[]} latencies
 * @property {number} cpuSec
 * @property {number} mainCpuSec             of that, the servers' main threads (JavaScript; no thread pool)
 * @property {number | null} dbCpuSec
 * @property {number} loadCpuSec             the load generator's own
 * @property {number} hostIdleSec            every core's idle time in the window
 *
 * @typedef {object} Summary
 * @property {number} requests
 * @property {number} rps
 * @property {number | null} p50Ms
 * @property {number | null} p99Ms
 * @property {number | null} maxMs
 * @property {number} errors
 * @property {Record<string, number>} statuses
 * @property {number | null} cpuUsPerReq    server process CPU µs per request
 * @property {number | null} mainCpuUsPerReq of that, its main thread's (JavaScript; RS256 signing runs in the thread pool)
 * @property {number | null} dbCpuUsPerReq  its Postgres backends' CPU µs per request
 * @property {number | null} loadCpuUsPerReq the load generator's CPU µs per request
 * @property {number | null} hostIdleUsPerReq idle core time per request: high when requests wait rather than compute
 * @property {number} windows
 */

/**
 * CPU seconds of every backend of the bench database with this application_name, by pid.
 * @param {import('pg').Client} db
 * @param {string | undefined} app
 * @returns {Promise<Map<number, number>>}
 */
async function backendCpu(db, app) {
  /** @type {Map<number, number>} */
  const cpu = new Map();
  if (app === undefined) return cpu;
  const { rows } = await db.query(
    'select pid from pg_stat_activity where datname = current_database() and application_name = $1',
    [app],
  );
  for (const { pid } of rows) {
    try {
      cpu.set(pid, cpuSeconds(pid));
    } catch {
      // the backend ended meanwhile
    }
  }
  return cpu;
}

/**
 * Something to run on the servers during exactly the measured part of a window (after the
 * warm-up), such as a profiler: `start` when measuring begins, `stop` once the load ends.
 * @typedef {{start(pids: number[], label: string): {stop(): Promise<void>}}} WindowProbe
 */

/**
 * One warm-up + measured window.
 * @param {Target} target
 * @param {{connections: number, warmupSec: number, durationSec: number}} load
 * @param {import('pg').Client} db
 * @param {{probe: WindowProbe, label: string}} [probing]
 * @returns {Promise<Window>}
 */
export async function measureWindow(target, load, db, probing) {
  /** @type {Promise<{cpu: number[], main: number[], hostIdle: number, db: Map<number, number>}> | undefined} */
  let before;
  /** @type {Promise<Window> | undefined} */
  let result;
  /** @type {{stop(): Promise<void>} | undefined} */
  let probe;
  const { code, stderr } = await runLoadGenerator(
    CLIENT,
    { ...target.spec, ...load },
    (message) => {
      if (message.event === 'measuring') {
        const cpu = target.pids.map(cpuSeconds);
        const main = target.pids.map(mainThreadCpuSeconds);
        const hostIdle = hostIdleSeconds();
        before = backendCpu(db, target.dbApp).then((dbCpu) => ({ cpu, main, hostIdle, db: dbCpu }));
        probe = probing?.probe.start(target.pids, probing.label);
      }
      if (message.event === 'result') {
        const cpuAfter = target.pids.map(cpuSeconds);
        const mainAfter = target.pids.map(mainThreadCpuSeconds);
        const hostIdleAfter = hostIdleSeconds();
        result = (async () => {
          await probe?.stop();
          const dbAfter = await backendCpu(db, target.dbApp);
          const start =
            await /** @type {Promise<{cpu: number[], main: number[], hostIdle: number, db: Map<number, number>}>} */ (
              before
            );
          const cpuSec = cpuAfter.reduce((sum, t, i) => sum + t - (start.cpu[i] ?? t), 0);
          const mainCpuSec = mainAfter.reduce((sum, t, i) => sum + t - (start.main[i] ?? t), 0);
          let dbCpuSec = null;
          if (target.dbApp !== undefined) {
            dbCpuSec = 0;
            for (const [pid, t] of dbAfter) dbCpuSec += t - (start.db.get(pid) ?? 0);
          }
          const { event: _event, ...rest } = message;
          return {
            ...rest,
            cpuSec,
            mainCpuSec,
            dbCpuSec,
            hostIdleSec: hostIdleAfter - start.hostIdle,
          };
        })();
      }
    },
    target.generatorCpus === undefined ? {} : { cpus: target.generatorCpus },
  );
  if (result === undefined)
    throw new Error(`load generator exited ${code} without a result:\n${stderr}`);
  return result;
}

/**
 * @param {number[]} sorted
 * @param {number} q
 */
function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return /** @type {number} */ (
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]
  );
}

/**
 * @param {Window[]} windows
 * @returns {Summary}
 */
export function summarize(windows) {
  const latencies = windows.flatMap((w) => w.latencies).sort((a, b) => a - b);
  const requests = windows.reduce((n, w) => n + w.requests, 0);
  const duration = windows.reduce((n, w) => n + w.durationSec, 0);
  const cpu = windows.reduce((n, w) => n + w.cpuSec, 0);
  const mainCpu = windows.reduce((n, w) => n + w.mainCpuSec, 0);
  const dbCpu = windows.every((w) => w.dbCpuSec !== null)
    ? windows.reduce((n, w) => n + /** @type {number} */ (w.dbCpuSec), 0)
    : null;
  const perRequest = (/** @type {(w: Window) => number} */ seconds) =>
    requests > 0 ? (windows.reduce((n, w) => n + seconds(w), 0) / requests) * 1e6 : null;
  /** @type {Record<string, number>} */
  const statuses = {};
  for (const w of windows)
    for (const [code, count] of Object.entries(w.statuses))
      statuses[code] = (statuses[code] ?? 0) + count;
  return {
    requests,
    rps: duration > 0 ? requests / duration : 0,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    maxMs: latencies[latencies.length - 1] ?? null,
    errors: windows.reduce((n, w) => n + w.errors, 0),
    statuses,
    cpuUsPerReq: requests > 0 ? (cpu / requests) * 1e6 : null,
    mainCpuUsPerReq: requests > 0 ? (mainCpu / requests) * 1e6 : null,
    dbCpuUsPerReq: requests > 0 && dbCpu !== null ? (dbCpu / requests) * 1e6 : null,
    loadCpuUsPerReq: perRequest((w) => w.loadCpuSec),
    hostIdleUsPerReq: perRequest((w) => w.hostIdleSec),
    windows: windows.length,
  };
}

/**
 * Plants created in a later window start 10 million ids above the previous window's.
 * @param {Target} target
 * @param {number} round
 * @returns {Target}
 */
function withFreshIds(target, round) {
  const plant = /** @type {{idStart: number} | undefined} */ (target.spec.plant);
  if (plant === undefined || round === 0) return target;
  return {
    ...target,
    spec: { ...target.spec, plant: { ...plant, idStart: plant.idStart + round * 10_000_000 } },
  };
}

/**
 * Ours and the baseline in `rounds` rounds, alternating A B B A A B ..., each window after a
 * warm-up (longer before a side's first window: JIT and connection pools; the servers stay up).
 * @param {{ours: Target, baseline: Target}} pair
 * @param {{connections: number, warmupSec: number, firstWarmupSec?: number, durationSec: number, rounds: number}} load
 * @param {import('pg').Client} db
 * @param {{probe: WindowProbe, scenario: string}} [probing]  labels its windows `<scenario>-ours` and `<scenario>-baseline`
 */
export async function measurePair(pair, { rounds, firstWarmupSec, ...load }, db, probing) {
  /** @type {Window[]} */
  const ours = [];
  /** @type {Window[]} */
  const baseline = [];
  for (let round = 0; round < rounds; round += 1) {
    const order =
      round % 2 === 0
        ? /** @type {const} */ (['ours', 'baseline'])
        : /** @type {const} */ (['baseline', 'ours']);
    for (const side of order) {
      const target = withFreshIds(pair[side], round);
      const warmupSec =
        round === 0 && firstWarmupSec !== undefined ? firstWarmupSec : load.warmupSec;
      const window = probing
        ? { probe: probing.probe, label: `${probing.scenario}-${side}` }
        : undefined;
      (side === 'ours' ? ours : baseline).push(
        await measureWindow(target, { ...load, warmupSec }, db, window),
      );
    }
  }
  const rounds_ = ours.map((o, i) => roundFigures(o, /** @type {Window} */ (baseline[i])));
  return { ours: summarize(ours), baseline: summarize(baseline), rounds: rounds_ };
}

/**
 * The same target quiet and under a background load (a flood, sign-in clients), in `rounds`
 * rounds alternating quiet loaded, loaded quiet, ...; the background runs during each loaded
 * window alone. What the background was answered is summed over its runs.
 * @param {Target} target
 * @param {{connections: number, warmupSec: number, firstWarmupSec: number, durationSec: number, rounds: number}} load
 * @param {import('pg').Client} db
 * @param {() => Promise<{stop(): Promise<{statuses: Record<string, number>, elapsedSec: number}>}>} startBackground
 * @param {WindowProbe} [probe]  run in every measured window, labelled `quiet` or `loaded`
 */
export async function measureUnderBackground(target, load, db, startBackground, probe) {
  /** @type {Window[]} */
  const quiet = [];
  /** @type {Window[]} */
  const loaded = [];
  /** @type {Record<string, number>} */
  const statuses = {};
  let seconds = 0;
  for (let round = 0; round < load.rounds; round += 1) {
    const warmupSec = round === 0 ? load.firstWarmupSec : load.warmupSec;
    const window = { connections: load.connections, durationSec: load.durationSec, warmupSec };
    for (const side of round % 2 === 0 ? ['quiet', 'loaded'] : ['loaded', 'quiet']) {
      const probing = probe && { probe, label: side };
      if (side === 'quiet') {
        quiet.push(await measureWindow(target, window, db, probing));
        continue;
      }
      const background = await startBackground();
      try {
        loaded.push(await measureWindow(target, window, db, probing));
      } finally {
        const result = await background.stop();
        for (const [status, count] of Object.entries(result.statuses))
          statuses[status] = (statuses[status] ?? 0) + count;
        seconds += result.elapsedSec;
      }
    }
  }
  const ours = summarize(loaded);
  const baseline = summarize(quiet);
  // Each round's pair of adjacent windows, for a look at the spread (the ratio is of the pooled p99s).
  const rounds = loaded.map((w, i) => {
    const q = /** @type {Window} */ (quiet[i]);
    return {
      oursRps: w.requests / w.durationSec,
      baselineRps: q.requests / q.durationSec,
      oursP99Ms: summarize([w]).p99Ms,
      baselineP99Ms: summarize([q]).p99Ms,
      oursCpuUsPerReq: w.requests > 0 ? (w.cpuSec / w.requests) * 1e6 : null,
      baselineCpuUsPerReq: q.requests > 0 ? (q.cpuSec / q.requests) * 1e6 : null,
    };
  });
  const ratio = {
    rps: baseline.rps > 0 ? ours.rps / baseline.rps : null,
    cpuPerRequest: null,
    p99: ours.p99Ms !== null && baseline.p99Ms ? ours.p99Ms / baseline.p99Ms : null,
  };
  return { ours, baseline, rounds, ratio, statuses, seconds };
}

/**
 * One round's two adjacent windows, side by side: what the machine did to one it likely did
 * to the other, so the ratio of the pair is steadier than either figure.
 * @param {Window} ours
 * @param {Window} baseline
 */
function roundFigures(ours, baseline) {
  const rps = (/** @type {Window} */ w) => (w.durationSec > 0 ? w.requests / w.durationSec : 0);
  const cpuUs = (/** @type {Window} */ w) =>
    w.requests > 0 ? (w.cpuSec / w.requests) * 1e6 : null;
  const mainUs = (/** @type {Window} */ w) =>
    w.requests > 0 ? (w.mainCpuSec / w.requests) * 1e6 : null;
  return {
    oursRps: rps(ours),
    baselineRps: rps(baseline),
    oursCpuUsPerReq: cpuUs(ours),
    baselineCpuUsPerReq: cpuUs(baseline),
    oursMainCpuUsPerReq: mainUs(ours),
    baselineMainCpuUsPerReq: mainUs(baseline),
  };
}
