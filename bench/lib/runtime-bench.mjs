// `pnpm bench -- --runtime-baseline=<node binary>`: the same code on two runtimes. Beside the
// platform on the pinned Node (this process's), it starts a token service, a Plant Store and an
// account-admin of the same build on the given node (e.g. an unpacked Node 20), on the same
// database, Redis, tenants and issuer (AUTH_URL), so a token from either is good at both. Each
// scenario then runs as `pnpm bench` runs it, with its own baseline replaced by itself on the
// other runtime: a scenario with `targets` measures its `ours` side on each runtime in
// alternating rounds (measurePair, one load-generator process); one that measures itself
// (sign-in bursts, flood, signals: a quiet and a loaded window of its own) runs once per runtime,
// and its own ratio is compared.
import { execFileSync } from 'node:child_process';
import { freePort, spawnService } from '@plant/test-kit';
import { fmt, table } from './report.mjs';

/**
 * @typedef {import('./platform.mjs').Platform} Platform
 * @typedef {{view: Platform, processes: import('./processes.mjs').ServerProcess[], version: string}} RuntimeBaseline
 */

/**
 * @param {{platform: Platform, node: string, logDir: string, nodeArgs?: (name: string) => string[], serviceEnv?: Record<string, Record<string, string>>}} options
 *   `nodeArgs`: as the platform's own (a profiled run profiles both runtimes' services)
 * @returns {Promise<RuntimeBaseline>}
 */
export async function startRuntimeBaseline({
  platform,
  node,
  logDir,
  nodeArgs = () => [],
  serviceEnv = {},
}) {
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const ports = async (/** @type {boolean} */ internal) => ({
    PORT: String(await freePort()),
    MANAGEMENT_PORT: String(await freePort()),
    ...(internal ? { INTERNAL_PORT: String(await freePort()) } : {}),
  });
  /** @param {'token-service' | 'plant-store' | 'account-admin'} service */
  const start = async (service) =>
    spawnService(service, {
      name: `${service}-${version}`,
      node,
      nodeArgs: nodeArgs(`${service}-${version}`),
      env: platform.envOf(service, {
        ...serviceEnv[service],
        ...(await ports(service === 'token-service')),
      }),
      logDir,
      // As the platform's own: a cold start on a busy shared host can take longer than 20 s.
      timeoutMs: 60_000,
    });
  const tokenService = await start('token-service');
  const plantStore = await start('plant-store');
  const accountAdmin = await start('account-admin');
  const view = /** @type {Platform} */ ({
    ...platform,
    tokenService,
    tokenServices: [tokenService],
    plantStores: [plantStore],
    accountAdmin,
    accountAdmins: [accountAdmin],
  });
  return { view, processes: [tokenService, plantStore, accountAdmin], version };
}

/**
 * A scenario's `ours` on the pinned runtime against its `ours` on the other one.
 * @param {{targets: (ctx: any) => {ours: import('./load.mjs').Target}}} scenario
 * @param {any} context
 * @param {RuntimeBaseline} other
 */
export function runtimeTargets(scenario, context, other) {
  return {
    ours: scenario.targets(context).ours,
    baseline: scenario.targets({ ...context, platform: other.view }).ours,
  };
}

/**
 * One line per scenario: req/s (CPU µs per request) on each runtime and their ratios; for a
 * scenario that measures itself, its own ratio on each.
 * @param {any[]} scenarios @param {string} version
 */
export function runtimeTable(scenarios, version) {
  const rows = scenarios.map((s) => {
    if (s.runtimes !== undefined) {
      const [ours, before] = s.runtimes;
      return [
        s.scenario,
        `own ratio ${ownRatio(ours)}`,
        `own ratio ${ownRatio(before)}`,
        '(each its own quiet/loaded pair)',
        '',
      ];
    }
    return [
      s.scenario,
      `${fmt(s.ours.rps)} req/s, ${fmt(s.ours.cpuUsPerReq)} µs`,
      `${fmt(s.baseline.rps)} req/s, ${fmt(s.baseline.cpuUsPerReq)} µs`,
      `${s.ratio.rps?.toFixed(2)}× (pooled ${s.ratio.pooled?.rps?.toFixed(2)}×)`,
      `${s.ratio.cpuPerRequest?.toFixed(2)}×`,
    ];
  });
  return table(
    ['scenario', `${process.version}`, version, 'req/s ratio (median of rounds)', 'CPU ratio'],
    rows,
    [0],
  );
}

/** A self-measured scenario's own figure: its p99 ratio when it has one (loaded / quiet), else req/s. @param {any} result */
function ownRatio(result) {
  if (typeof result.error === 'string') return `failed: ${result.error}`;
  const p99 = result.ratio?.p99;
  if (typeof p99 === 'number') return `p99 ${p99.toFixed(2)}×`;
  const rps = result.ratio?.rps;
  return typeof rps === 'number' ? `req/s ${rps.toFixed(2)}×` : 'n/a';
}
