#!/usr/bin/env node
// `pnpm bench [-- --quick] [--profile] [--only=token,keys,list] [--pgbouncer] [--tracing]
// [--runtime-baseline=<node>] [--waits]`: starts the three services as
// production runs them, seeds a tenant, runs each scenario and its baseline back to back
// from a separate load-generator process, prints one table and writes
// bench/results/<date>.json (a full run also rewrites the table of docs/performance.md). Build
// first (`pnpm build`): it runs the built JS.
//
// Absolute figures drift ±20% between runs on shared machines; the ratios to the baselines,
// measured in the same run, and CPU time per request are what to compare.
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ROOT,
  DATABASE_URL,
  grantToken,
  issuerOf,
  missingServices,
  PLANT_STORE_AUDIENCE,
} from './lib/platform.mjs';
import { openSession } from './lib/session.mjs';
import { assertScenarioWorks, assertTargetsAnswer, runRevocation } from './lib/scenario-runs.mjs';
import { measurePair } from './lib/load.mjs';
import { runPooledBench } from './lib/pooled-bench.mjs';
import { runTracingBench } from './lib/tracing-bench.mjs';
import { runtimeTable, runtimeTargets, startRuntimeBaseline } from './lib/runtime-bench.mjs';
import {
  breakdown,
  PERF_NODE_ARGS,
  perfProbe,
  perfReport,
  perfUnavailable,
} from './lib/perf-record.mjs';
import { imageNodeOptions } from '@plant/test-kit';
import { rssMb, startServer } from './lib/processes.mjs';
import { machine, ratios, summaryTable, targetLines } from './lib/report.mjs';
import { renderTable, writeTable } from './lib/performance-table.mjs';
import { ES256_SCENARIOS, SCENARIOS } from './scenarios/index.mjs';
import { serviceEnv as signalsServiceEnv } from './scenarios/signals.mjs';

/** @typedef {import('./scenarios/index.mjs').ScenarioContext} ScenarioContext */

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    // Linux perf on each server's main thread during the measured windows (bench/lib/perf-record.mjs).
    perf: { type: 'boolean', default: false },
    only: { type: 'string' },
    connections: { type: 'string' },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    // Experiments only (e.g. warn: what request logging costs); results say so.
    'log-level': { type: 'string', default: 'info' },
    // List and create through PgBouncer against direct (bench/lib/pooled-bench.mjs), nothing else.
    pgbouncer: { type: 'boolean', default: false },
    // List and grant with tracing off and on at 10 % (bench/lib/tracing-bench.mjs), nothing else;
    // with --baseline-root, against that checkout's build (the code before tracing).
    tracing: { type: 'boolean', default: false },
    'baseline-root': { type: 'string' },
    // Every scenario on this Node against the same build on another node binary, alternating
    // rounds (bench/lib/runtime-bench.mjs); each scenario's own baseline is not measured.
    'runtime-baseline': { type: 'string' },
    // Where requests wait: event-loop utilisation and thread-pool signatures, per second and
    // server (bench/lib/wait-probe.mjs), into the profiles directory.
    waits: { type: 'boolean', default: false },
  },
});

const PLANTS = 10_000;
const quick = args.quick;
// Full: 6 rounds A B B A A B ... of 3 s per side (18 s measured each; 3 s warm-up before a
// side's first window, 1 s before the others), ratios the median of the rounds'; a scenario
// may ask for more (`fullRounds`: token, whose ratio sits closest to its target); quick: one
// 3 s window per side after 1 s.
const load = {
  connections: Number(args.connections ?? 10),
  warmupSec: 1,
  firstWarmupSec: quick ? 1 : 3,
  durationSec: Number(args.duration ?? 3),
  rounds: Number(args.rounds ?? (quick ? 1 : 6)),
};
/** @param {object} scenario a scenario module; `fullRounds` if it asks for more rounds */
const roundsOf = (scenario) => {
  if (args.rounds !== undefined || quick) return load.rounds;
  return 'fullRounds' in scenario && typeof scenario.fullRounds === 'number'
    ? scenario.fullRounds
    : load.rounds;
};
const only = args.only ? new Set(args.only.split(',')) : undefined;
const stamp = new Date()
  .toISOString()
  .replace(/\.\d+Z$/, 'Z')
  .replace(/:/g, '-');
const resultsDir = join(ROOT, 'bench/results');
const logDir = join(resultsDir, 'logs', stamp);
const profileDir = join(resultsDir, 'profiles', stamp);
const log = (/** @type {string} */ msg) => process.stderr.write(`[bench] ${msg}\n`);

const missing = missingServices().filter((s) => s !== 'account-admin');
if (missing.length > 0) {
  log(`built services missing: ${missing.join(', ')} (run \`pnpm build\` first)`);
  process.exit(1);
}

if (args.pgbouncer) {
  const code = await runPooledBench({ stamp, logDir, load, log }).catch(
    (/** @type {Error} */ err) => {
      log(`failed: ${err.stack ?? err}`);
      return 1;
    },
  );
  process.exit(code);
}

if (args.tracing) {
  const code = await runTracingBench({
    stamp,
    logDir,
    // 14 rounds unless told: its ratios sit near their targets, and one 3 s round on a shared
    // host swings ±10 % (identical code measured 0.79–1.27× round by round).
    load: { ...load, rounds: args.rounds !== undefined || quick ? load.rounds : 14 },
    log,
    ...(args['baseline-root'] === undefined ? {} : { baselineRoot: args['baseline-root'] }),
  }).then(
    (result) => {
      mkdirSync(resultsDir, { recursive: true });
      const file = join(resultsDir, `tracing-${stamp}.json`);
      writeFileSync(
        file,
        `${JSON.stringify({ stamp, machine: machine(), load, ...result }, null, 2)}\n`,
      );
      process.stdout.write(
        `${result.pairs.map((p) => `${p.name}: ratio ${p.ratio.rps?.toFixed(3)} (target ${p.target}), cpu/req ratio ${p.ratio.cpuPerRequest?.toFixed(3)}`).join('\n')}\nspan exports received: ${result.sink.exports}\nwritten to ${file}\n`,
      );
      return 0;
    },
    (/** @type {Error} */ err) => {
      log(`failed: ${err.stack ?? err}`);
      return 1;
    },
  );
  process.exit(code);
}

/** @param {string} name */
const profileArgs = (name) => [
  ...(args.profile
    ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`]
    : []),
  ...(args.perf ? PERF_NODE_ARGS : []),
  ...(args.waits ? ['--import', pathToFileURL(join(profileDir, 'wait-probe.mjs')).href] : []),
];
if (args.perf) {
  const why = perfUnavailable();
  if (why !== null) {
    log(`--perf: ${why}`);
    process.exit(1);
  }
}
if (args.profile || args.perf || args.waits) mkdirSync(profileDir, { recursive: true });
if (args.waits)
  writeFileSync(
    join(profileDir, 'wait-probe.mjs'),
    `import { startWaitProbe } from ${JSON.stringify(pathToFileURL(join(ROOT, 'bench/lib/wait-probe.mjs')).href)};\nstartWaitProbe(${JSON.stringify(profileDir)});\n`,
  );
const perf = args.perf ? perfProbe(profileDir) : undefined;
/** @type {string[]} */
const perfReports = [];
const started = Date.now();
const loadAtStart = machine().loadAverage1m;
log(`migrating ${DATABASE_URL.replace(/\/\/[^@]*@/, '//')}`);
const session = await openSession({
  stamp,
  logDir,
  nodeArgs: profileArgs,
  accounts: { reader: 'View', writer: 'Edit' },
  plants: PLANTS,
  logLevel: args['log-level'],
  log,
  es256: !only || ES256_SCENARIOS.some((name) => only.has(name)),
  // The signals and push-fair scenarios push to https receivers on loopback (certificate trusted).
  ...(!only || only.has('signals') || only.has('push-fair')
    ? { serviceEnv: signalsServiceEnv() }
    : {}),
});
const { platform, tenant } = session;
const accounts = /** @type {ScenarioContext['accounts']} */ (session.accounts);
/** @type {import('./lib/processes.mjs').ServerProcess[]} */
const baselineProcesses = [];
let exitCode = 0;
let closed = false;
try {
  const oidcClient = { id: 'baseline-client', secret: 'baseline-secret-0123456789abcdef' };
  const baselineEnv = { PATH: process.env.PATH ?? '', NODE_ENV: 'production', PORT: '0' };
  // A baseline runs the heap of the service it stands against (its image's NODE_OPTIONS, as the
  // platform's processes get them): V8 left to size the heap from this host gives 64 MB
  // semi-spaces, four times the services', and the ratio would compare heaps, not code.
  /** @param {'token-service' | 'plant-store'} service @returns {Record<string, string>} */
  const heapOf = (service) => {
    const options = imageNodeOptions(service);
    return options === undefined ? {} : { NODE_OPTIONS: options };
  };
  const oidcServer = (/** @type {string} */ name, /** @type {string} */ alg) =>
    startServer({
      name,
      script: join(ROOT, 'bench/baselines/oidc-provider-server.mjs'),
      env: {
        ...baselineEnv,
        ...heapOf('token-service'),
        ISSUER: issuerOf('baseline'),
        AUDIENCE: PLANT_STORE_AUDIENCE,
        CLIENT_ID: oidcClient.id,
        CLIENT_SECRET: oidcClient.secret,
        ALG: alg,
      },
      logDir,
      nodeArgs: profileArgs(name),
      timeoutMs: 60_000,
    });
  const [oidc, oidcEs256, naive] = await Promise.all([
    oidcServer('baseline-oidc-provider', 'RS256'),
    oidcServer('baseline-oidc-provider-es256', 'ES256'),
    startServer({
      name: 'baseline-naive-plants',
      script: join(ROOT, 'bench/baselines/naive-plants-server.mjs'),
      env: {
        ...baselineEnv,
        ...heapOf('plant-store'),
        DATABASE_URL,
        JWKS_URL: `${platform.tokenService.internalUrl}/internal/v1/realms/${tenant}/jwks`,
        ISSUER: issuerOf(tenant),
        AUDIENCE: PLANT_STORE_AUDIENCE,
        BASELINE_TENANT: tenant,
      },
      logDir,
      nodeArgs: profileArgs('baseline-naive-plants'),
      timeoutMs: 60_000,
    }),
  ]);
  baselineProcesses.push(oidc, oidcEs256, naive);
  const baselines = { oidc, oidcEs256, naive, oidcClient };

  const other =
    args['runtime-baseline'] === undefined
      ? undefined
      : await startRuntimeBaseline({
          platform,
          node: args['runtime-baseline'],
          logDir,
          nodeArgs: profileArgs,
          ...(!only || only.has('signals') ? { serviceEnv: signalsServiceEnv() } : {}),
        });
  if (other) {
    baselineProcesses.push(...other.processes);
    log(`runtime baseline: the same build on ${other.version} (${args['runtime-baseline']})`);
  }
  const services = [
    platform.tokenService,
    ...platform.plantStores,
    ...(platform.accountAdmin ? [platform.accountAdmin] : []),
    ...(other ? other.processes : []),
  ];
  await sleep(1000);
  const idle = new Map(services.map((s) => [s.name, rssMb(s.pid)]));

  /** @type {any[]} */
  const results = [];
  for (const scenario of SCENARIOS) {
    if (only && !only.has(scenario.name)) continue;
    // Fresh tokens per scenario: they live ACCESS_TOKEN_TTL (300 s) and a full run is longer.
    const tokens = {
      reader: await grantToken(platform, tenant, accounts.reader),
      writer: await grantToken(platform, tenant, accounts.writer),
    };
    const es256 = session.es256 && {
      ...session.es256,
      tokens: {
        reader: await grantToken(platform, session.es256.tenant, session.es256.accounts.reader),
        writer: await grantToken(platform, session.es256.tenant, session.es256.accounts.writer),
      },
    };
    // A scenario may arrange what it needs first (keys: a key on the writer account; dpop: a bound token).
    const prepared =
      'prepare' in scenario ? await scenario.prepare({ platform, tenant, accounts }) : undefined;
    const context = /** @type {ScenarioContext} */ ({
      platform,
      tenant,
      accounts,
      tokens,
      baselines,
      prepared,
      es256,
    });
    if ('check' in scenario) await scenario.check(context);
    else await assertScenarioWorks(scenario.name, { ...context, oidcClient });
    const rounds = roundsOf(scenario);
    log(`${scenario.name}: ${rounds} round(s) of ${load.durationSec}s per side`);
    // A scenario that measures itself (signin: one service, quiet and under a second load).
    if ('measure' in scenario) {
      const measuring = scenario.measure({
        platform,
        tenant,
        accounts,
        db: session.db,
        load: { ...load, rounds },
      });
      const measured = other
        ? await measuring.catch((/** @type {Error} */ err) => ({
            scenario: scenario.name,
            rounds: [],
            error: err.message.split('\n')[0],
          }))
        : await measuring;
      if (other) {
        // Its own quiet/loaded pair on each runtime, one after the other; a side that fails
        // (its own check of what it saw) is reported, not the end of the comparison.
        const before = await scenario
          .measure({
            platform: other.view,
            tenant,
            accounts,
            db: session.db,
            load: { ...load, rounds },
          })
          .catch((/** @type {Error} */ err) => ({ error: err.message.split('\n')[0] }));
        results.push({ ...measured, runtimes: [measured, before] });
      } else results.push(measured);
      continue;
    }
    const targets = other ? runtimeTargets(scenario, context, other) : scenario.targets(context);
    if ('checkTargets' in scenario) await assertTargetsAnswer(scenario.name, targets);
    const pair = await measurePair(
      targets,
      { ...load, rounds },
      session.db,
      perf && { probe: perf, scenario: scenario.name },
    );
    if (perf) {
      const side = (/** @type {'ours' | 'baseline'} */ name) =>
        breakdown(
          perf.files.get(`${scenario.name}-${name}`) ?? [],
          pair[name].mainCpuUsPerReq ?? 0,
        );
      const report = perfReport(scenario.name, side('ours'), side('baseline'));
      writeFileSync(join(profileDir, `perf-${scenario.name}.txt`), `${report}\n`);
      perfReports.push(report);
    }
    results.push({
      scenario: scenario.name,
      what: scenario.what,
      baselineWhat: other ? `the same on ${other.version}` : scenario.baselineWhat,
      labels: 'labels' in scenario ? scenario.labels : undefined,
      ...pair,
      ratio: ratios(pair),
    });
  }

  await sleep(500);
  const memory = services.map((s) => ({
    service: s.name,
    idleMb: /** @type {number} */ (idle.get(s.name)),
    afterMb: rssMb(s.pid),
  }));
  await Promise.all(baselineProcesses.splice(0).map((p) => p.stop()));
  await session.close();
  closed = true;

  /** @type {any} */
  let revocationResult = { skipped: other ? 'runtime comparison' : 'not selected (--only)' };
  if (!other && (!only || only.has('revocation'))) {
    log(`revocation: pnpm bench:revocation (${quick ? 30 : 300} changes)`);
    revocationResult = await runRevocation({ iterations: quick ? 30 : 300, logDir }).catch(
      (/** @type {Error} */ err) => ({
        skipped: `bench:revocation failed: ${err.message.split('\n')[0]}`,
      }),
    );
  }

  const output = {
    date: new Date(started).toISOString(),
    quick,
    machine: { ...machine(), loadAverage1mAtStart: loadAtStart },
    load,
    plants: PLANTS,
    environment: `built JS, NODE_ENV=production, LOG_LEVEL=${args['log-level']}, one process per service, loopback, autocannon in its own process`,
    ...(other
      ? { runtimeBaseline: { node: args['runtime-baseline'], version: other.version } }
      : {}),
    scenarios: results,
    revocation: revocationResult,
    memory,
    elapsedSec: Math.round((Date.now() - started) / 1000),
  };
  mkdirSync(resultsDir, { recursive: true });
  // Profiled runs carry the profilers' overhead: named apart, never mistaken for a full run.
  const experiment = `${args['log-level'] !== 'info' ? `-log-${args['log-level']}` : ''}${args.profile ? '-profiled' : ''}${args.perf ? '-perf' : ''}${args.waits ? '-waits' : ''}`;
  const file = join(
    resultsDir,
    `${other ? 'runtime-' : ''}${stamp}${quick ? '-quick' : ''}${only ? '-partial' : ''}${experiment}.json`,
  );
  writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
  // A full run is the one docs/performance.md's table shows: rewritten from this result.
  const fullRun = !quick && !only && !other && experiment === '';
  if (fullRun) writeTable(renderTable(output, basename(file)));

  const cores = output.machine.cores;
  process.stdout.write(
    `\nPlant Store platform bench, ${output.date}, ${cores} cores (${output.machine.cpuModel}), node ${process.version}, load average ${loadAtStart} → ${output.machine.loadAverage1m}\n`,
  );
  if (args['log-level'] !== 'info')
    process.stdout.write(
      `EXPERIMENT: services ran with LOG_LEVEL=${args['log-level']}, not as in production\n`,
    );
  if (args.profile || args.perf)
    process.stdout.write('PROFILED: servers ran under a profiler; figures carry its overhead\n');
  process.stdout.write(
    `${load.connections} connections; per side ${roundsLine(output.scenarios)} × ${load.durationSec}s measured (warm-up ${load.firstWarmupSec}s before the first window, ${load.warmupSec}s before the others)${load.rounds > 1 ? ", alternating A B B A, ratios the median of the rounds'" : ''}; ratios > 1 are better than the baseline\n\n`,
  );
  if (other)
    process.stdout.write(
      `runtime comparison: ${process.version} (ratios > 1: faster) against ${other.version}\n${runtimeTable(results, other.version)}\n\nidle RSS: ${memory.map((m) => `${m.service} ${m.idleMb.toFixed(0)} MB (after ${m.afterMb.toFixed(0)} MB)`).join(', ')}\n\n`,
    );
  else {
    process.stdout.write(`${summaryTable(output)}\n\n`);
    process.stdout.write(`${targetLines(output)}\n\n`);
  }
  for (const report of perfReports) process.stdout.write(`${report}\n\n`);
  process.stdout.write(
    `written ${file.slice(ROOT.length + 1)}${fullRun ? ' and the table of docs/performance.md' : ''} in ${output.elapsedSec}s${args.profile || args.perf || args.waits ? `; profiles in ${profileDir.slice(ROOT.length + 1)}` : ''}\n`,
  );
} catch (err) {
  exitCode = 1;
  log(`failed: ${/** @type {Error} */ (err).stack ?? err}`);
  log(`service logs: ${logDir}`);
} finally {
  await Promise.all(baselineProcesses.map((p) => p.stop()));
  if (!closed) await session.close();
}
process.exit(exitCode);

/**
 * "6", or "6 (token 12)" when a scenario ran more rounds than the rest.
 * @param {{scenario: string, rounds: unknown[]}[]} scenarios
 */
function roundsLine(scenarios) {
  const extra = scenarios
    .filter((s) => s.rounds.length !== load.rounds)
    .map((s) => `${s.scenario} ${s.rounds.length}`);
  return extra.length > 0 ? `${load.rounds} (${extra.join(', ')})` : String(load.rounds);
}
