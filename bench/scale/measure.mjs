// What `pnpm bench:scale` reads off the processes: load windows from the separate load
// generator, /metrics series, CPU time and RSS from /proc.
import { measureWindow, summarize } from '../lib/load.mjs';

/**
 * @typedef {object} LoadFigures
 * @property {number} rps
 * @property {number | null} p50Ms
 * @property {number | null} p99Ms
 * @property {number} errors
 * @property {Record<string, number>} statuses
 * @property {number | null} cpuUsPerReq
 */

/**
 * One warm-up and one measured window of `spec` against the processes `pids`; throws when any
 * answer was not the expected status (a broken setup must not be measured).
 * @param {Record<string, unknown>} spec  what the load generator sends (bench/load/autocannon-client.mjs)
 * @param {number[]} pids
 * @param {import('pg').Client} db
 * @param {{warmupSec: number, durationSec: number, connections?: number, expect?: number}} load
 * @returns {Promise<LoadFigures>}
 */
export async function loadWindow(
  spec,
  pids,
  db,
  { warmupSec, durationSec, connections = 10, expect = 200 },
) {
  const window = await measureWindow({ spec, pids }, { connections, warmupSec, durationSec }, db);
  const { rps, p50Ms, p99Ms, errors, statuses, cpuUsPerReq } = summarize([window]);
  const unexpected = Object.keys(statuses).filter((code) => Number(code) !== expect);
  if (unexpected.length > 0)
    throw new Error(
      `${String(spec.path)}: answers ${JSON.stringify(statuses)}, expected only ${expect}`,
    );
  return { rps, p50Ms, p99Ms, errors, statuses, cpuUsPerReq };
}

/**
 * The warm-up and measured seconds of the `index`-th size of a part: the first size warms the
 * processes longer (JIT, pools), so it is not measured colder than the others.
 * @param {boolean} quick
 * @param {number} index
 */
export function windowOf(quick, index) {
  return { warmupSec: index === 0 ? (quick ? 3 : 5) : quick ? 1 : 2, durationSec: quick ? 3 : 5 };
}

/**
 * The sum of a metric's series on a process's /metrics (its management port) whose labels include `labels`.
 * @param {{url: string, managementUrl?: string}} svc  the process
 * @param {string} name
 * @param {Record<string, string>} [labels]
 */
export async function metricOf(svc, name, labels = {}) {
  const text = await (await fetch(`${svc.managementUrl ?? svc.url}/metrics`)).text();
  let sum = 0;
  for (const match of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) {
    const series = match[1] ?? '';
    if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`)))
      sum += Number(match[2]);
  }
  return sum;
}

/**
 * Runs `tasks` with at most `concurrency` at once; resolves with their results in order.
 * @template T
 * @param {number} count
 * @param {number} concurrency
 * @param {(i: number) => Promise<T>} task
 * @returns {Promise<T[]>}
 */
export async function inParallel(count, concurrency, task) {
  /** @type {T[]} */
  const results = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/**
 * `value` over `base`, or null when either is missing.
 * @param {number | null | undefined} value
 * @param {number | null | undefined} base
 */
export function ratio(value, base) {
  return value === null || value === undefined || base === null || base === undefined || base === 0
    ? null
    : value / base;
}

/**
 * A target of the run: its figure, the bound, and whether the figure meets it.
 * @param {string} name
 * @param {number | null} value
 * @param {number} target
 * @param {'<=' | '>='} sense
 */
export function target(name, value, target, sense) {
  const met = value !== null && (sense === '<=' ? value <= target : value >= target);
  return {
    name,
    value: value === null ? null : Number(value.toFixed(3)),
    target: `${sense} ${target}`,
    met,
  };
}
