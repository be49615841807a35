// `pnpm bench -- --tracing [--baseline-root=<dir>]`: what OpenTelemetry tracing costs list and
// grant (docs/performance.md, "Tracing"). Beside the platform's own Plant Store and token service
// (tracing off: no OTEL_* variable), it starts one of each with tracing on at 10 % sampling
// (`parentbased_traceidratio`, 0.1; spans to an OTLP/HTTP sink in this process), and, given
// `--baseline-root`, one of each from that checkout's build (the code before tracing existed:
// `git archive <commit> | tar -x -C <dir>`, `pnpm install --offline`, `pnpm build`). Every
// process shares the database, Redis and tenant. Each pair runs as `pnpm bench` runs its
// scenarios (measurePair: alternating rounds, one load-generator process).
import { join } from 'node:path';
import { freePort, spawnServer, spawnService, startOtlpReceiver } from '@plant/test-kit';
import { grantBody, grantToken, tokenPath } from './platform.mjs';
import { measurePair } from './load.mjs';
import { fmt, ratios } from './report.mjs';
import { openSession } from './session.mjs';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** What docs/deploy.md recommends in production, and what the targets are stated at. */
export const TRACED = {
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: '0.1',
};

/**
 * @param {{stamp: string, logDir: string, load: {connections: number, warmupSec: number, firstWarmupSec: number, durationSec: number, rounds: number}, log: (msg: string) => void, baselineRoot?: string}} options
 * @returns {Promise<{pairs: any[], sink: {exports: number}}>}
 */
export async function runTracingBench({ stamp, logDir, load, log, baselineRoot }) {
  const sink = await startOtlpReceiver({ keep: false });
  const session = await openSession({
    stamp,
    logDir,
    accounts: { reader: 'View', writer: 'Edit' },
    plants: 10_000,
    log,
  });
  const { platform, tenant, accounts, db } = session;
  /** @type {Array<{stop(signal?: NodeJS.Signals): Promise<unknown>}>} */
  const extra = [];
  try {
    const traced = { ...TRACED, OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint };
    const tokenPorts = async () => ({
      PORT: String(await freePort()),
      INTERNAL_PORT: String(await freePort()),
      MANAGEMENT_PORT: String(await freePort()),
    });
    const storeOn = await platform.startPlantStore(traced);
    const tokenOn = await spawnService('token-service', {
      name: 'token-service-traced',
      env: platform.envOf('token-service', { ...traced, ...(await tokenPorts()) }),
      logDir,
    });
    extra.push(tokenOn);
    /** @type {{store?: any, token?: any}} */
    const before = {};
    if (baselineRoot !== undefined) {
      const script = (/** @type {string} */ service) =>
        join(baselineRoot, 'services', service, 'dist/start.js');
      before.store = await spawnServer({
        name: 'plant-store-before',
        script: script('plant-store'),
        env: platform.envOf('plant-store', {
          PORT: String(await freePort()),
          MANAGEMENT_PORT: String(await freePort()),
        }),
        logDir,
      });
      before.token = await spawnServer({
        name: 'token-service-before',
        script: script('token-service'),
        env: platform.envOf('token-service', await tokenPorts()),
        logDir,
      });
      extra.push(before.store, before.token);
    }
    const reader = await grantToken(platform, tenant, accounts.reader);
    const list = (/** @type {{url: string, pid: number}} */ svc) => ({
      spec: {
        url: svc.url,
        method: 'GET',
        path: '/plants?limit=20',
        headers: { authorization: `Bearer ${reader}` },
      },
      pids: [svc.pid],
    });
    const grant = (/** @type {{url: string, pid: number}} */ svc) => ({
      spec: {
        url: svc.url,
        method: 'POST',
        path: tokenPath(tenant),
        headers: FORM,
        body: grantBody(accounts.writer.client_id, accounts.writer.secret),
      },
      pids: [svc.pid],
    });
    const store = platform.plantStores[0];
    const token = platform.tokenService;
    /** @type {Array<{name: string, target: string, ours: any, baseline: any}>} */
    const plan =
      before.store !== undefined
        ? [
            {
              name: 'list, off',
              target: '≥ 0.98',
              ours: list(store),
              baseline: list(before.store),
            },
            {
              name: 'list, on 10 %',
              target: '≥ 0.9',
              ours: list(storeOn),
              baseline: list(before.store),
            },
            {
              name: 'grant, off',
              target: '≥ 0.98',
              ours: grant(token),
              baseline: grant(before.token),
            },
            {
              name: 'grant, on 10 %',
              target: '≥ 0.9',
              ours: grant(tokenOn),
              baseline: grant(before.token),
            },
          ]
        : [
            {
              name: 'list, on 10 % vs off',
              target: '≥ 0.9',
              ours: list(storeOn),
              baseline: list(store),
            },
            {
              name: 'grant, on 10 % vs off',
              target: '≥ 0.9',
              ours: grant(tokenOn),
              baseline: grant(token),
            },
          ];
    const pairs = [];
    for (const { name, target, ours, baseline } of plan) {
      log(`tracing: ${name}, ${load.rounds} round(s) of ${load.durationSec}s per side`);
      const pair = await measurePair({ ours, baseline }, load, db);
      const ratio = ratios(pair);
      pairs.push({ name, target, ours: pair.ours, baseline: pair.baseline, ratio });
      log(
        `tracing: ${name}: ${fmt(pair.ours.rps)} vs ${fmt(pair.baseline.rps)} req/s, ratio ${ratio.rps?.toFixed(3)} (target ${target})`,
      );
    }
    return { pairs, sink: { exports: sink.exports() } };
  } finally {
    await Promise.all(extra.map((p) => p.stop('SIGTERM')));
    await session.close();
    await sink.close();
  }
}
