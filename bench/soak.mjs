#!/usr/bin/env node
// `pnpm bench:soak [-- --duration=60 --warmup=120 --workers=16 --idle-after=60 --node=<binary> --heap-snapshots]`: the platform
// as production runs it under a mixed load for a minute: token grants, creates, lists, and
// secret resets through the internal API (each checked: new secret works, older token
// refused). Reports throughput, p50/p99 per operation, unexpected outcomes (must be 0; the
// refused old tokens are intended and counted apart) and every process's RSS, sampled every
// second with the V8 heap in use and its young and old generations' committed sizes; growth
// compares the medians of the window's two halves. After the load, each process is left idle
// for `--idle-after` seconds and measured again: what it gives back once the load is gone.
// `--node=<binary>` runs the services on another runtime (the load generator stays on the pinned
// one): the same soak on Node 20 and Node 24, one after the other ("Memory" in docs/performance.md).
// The warm-up is 120 s because V8 keeps enlarging its heaps for 60-90 s at this allocation
// rate (a 240 s run: the token service's post-GC RSS rose from 132 to ~145 MB by 60-90 s,
// then stayed there for the rest); growth after it is what a leak would show.
// `--heap-snapshots` also measures the live heap (V8 snapshots after a full GC) at the start
// and the end: the leak check proper (it pauses each service and inflates its RSS, so its
// RSS figures are not the ones to quote). Writes bench/results/<date>-soak.json. Build first.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { grantToken, INTERNAL_API_TOKEN, missingServices, ROOT } from './lib/platform.mjs';
import { cpuSeconds, rssMb, runLoadGenerator } from './lib/processes.mjs';
import { fmt, machine, table, TARGETS } from './lib/report.mjs';
import { imageNodeOptions } from '@plant/test-kit';
import { openSession } from './lib/session.mjs';
import { heapMb, liveHeapMb, snapshotNodeArgs } from './lib/heap-snapshots.mjs';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    duration: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '120' },
    workers: { type: 'string', default: '16' },
    'reset-every-ms': { type: 'string', default: '250' },
    'idle-after': { type: 'string', default: '60' },
    node: { type: 'string' },
    // NODE_OPTIONS of every service instead of its image's (`--node-options=` for none).
    'node-options': { type: 'string' },
    // Live heap (after a full GC, from V8 heap snapshots) at the start and end of the measured
    // window; each snapshot pauses its service for about a second.
    'heap-snapshots': { type: 'boolean', default: false },
  },
});
const CLIENT = fileURLToPath(new URL('./load/soak-client.mjs', import.meta.url));
const stamp = new Date()
  .toISOString()
  .replace(/\.\d+Z$/, 'Z')
  .replace(/:/g, '-');
const resultsDir = join(ROOT, 'bench/results');
const logDir = join(resultsDir, 'logs', `${stamp}-soak`);
const log = (/** @type {string} */ msg) => process.stderr.write(`[soak] ${msg}\n`);

const missing = missingServices().filter((s) => s !== 'account-admin');
if (missing.length > 0) {
  log(`built services missing: ${missing.join(', ')} (run \`pnpm build\` first)`);
  process.exit(1);
}

const started = Date.now();
const serviceNode = args.node ?? process.execPath;
const runtime = execFileSync(serviceNode, ['--version'], { encoding: 'utf8' }).trim();
const snapshotDir = join(resultsDir, 'profiles', `${stamp}-soak-heap`);
if (args['heap-snapshots']) mkdirSync(snapshotDir, { recursive: true });
const session = await openSession({
  stamp,
  logDir,
  ...(args['heap-snapshots'] ? { nodeArgs: () => snapshotNodeArgs(snapshotDir) } : {}),
  accounts: { reader: 'View', writer: 'Edit', rotator: 'Edit' },
  plants: 10_000,
  log,
  ...(args.node === undefined ? {} : { node: args.node }),
  ...(args['node-options'] === undefined
    ? {}
    : {
        serviceEnv: Object.fromEntries(
          ['token-service', 'plant-store', 'account-admin'].map((s) => [
            s,
            { NODE_OPTIONS: /** @type {string} */ (args['node-options']) },
          ]),
        ),
      }),
});
const { platform, tenant, accounts } = session;
const processes = [
  platform.tokenService,
  ...platform.plantStores,
  ...(platform.accountAdmin ? [platform.accountAdmin] : []),
];
let exitCode = 0;
try {
  const tokens = {
    reader: await grantToken(platform, tenant, accounts.reader),
    writer: await grantToken(platform, tenant, accounts.writer),
  };
  const spec = {
    plantStoreUrl: platform.plantStores[0].url,
    tokenUrl: platform.tokenService.url,
    internalUrl: platform.tokenService.internalUrl,
    internalToken: INTERNAL_API_TOKEN,
    tenant,
    accounts,
    tokens,
    workers: Number(args.workers),
    warmupSec: Number(args.warmup),
    durationSec: Number(args.duration),
    resetEveryMs: Number(args['reset-every-ms']),
    firstId: 1_000_000,
  };
  log(
    `${spec.warmupSec}s warm-up, then ${spec.durationSec}s measured; ${spec.workers} workers, a reset every ${spec.resetEveryMs} ms`,
  );
  const idle = processes.map((p) => rssMb(p.pid));

  /** @type {{atSec: number, rssMb: Record<string, number>, heapUsedMb: Record<string, number | null>, heapTotalMb: Record<string, number | null>, externalMb: Record<string, number | null>, newSpaceMb: Record<string, number | null>, oldSpaceMb: Record<string, number | null>}[]} */
  const samples = [];
  /** @type {number[]} */
  let cpuBefore = [];
  let measureStart = 0;
  /** @type {NodeJS.Timeout | undefined} */
  let sampler;
  // RSS from /proc; the V8 heap in use from each service's /metrics (prom-client's default
  // nodejs_heap_size_used_bytes), to tell a growing heap from a heap that only reserved more.
  const sample = () => {
    const atSec = Math.round((Date.now() - measureStart) / 1000);
    const rss = Object.fromEntries(processes.map((p) => [p.name, Number(rssMb(p.pid).toFixed(1))]));
    const entry = {
      atSec,
      rssMb: rss,
      heapUsedMb: /** @type {Record<string, number | null>} */ ({}),
      heapTotalMb: /** @type {Record<string, number | null>} */ ({}),
      externalMb: /** @type {Record<string, number | null>} */ ({}),
      newSpaceMb: /** @type {Record<string, number | null>} */ ({}),
      oldSpaceMb: /** @type {Record<string, number | null>} */ ({}),
    };
    samples.push(entry);
    return Promise.all(
      processes.map(async (p) => {
        const heap = await heapMb(p.managementUrl);
        entry.heapUsedMb[p.name] = heap.used;
        entry.heapTotalMb[p.name] = heap.total;
        entry.externalMb[p.name] = heap.external;
        entry.newSpaceMb[p.name] = heap.newSpace;
        entry.oldSpaceMb[p.name] = heap.oldSpace;
      }),
    );
  };
  /** @type {Promise<unknown>[]} */
  const sampling = [];
  /** @type {{start: Promise<(number | null)[]> | undefined, end: Promise<(number | null)[]> | undefined}} */
  const liveHeap = { start: undefined, end: undefined };
  const snapshotAll = () => Promise.all(processes.map((p) => liveHeapMb(p, snapshotDir)));

  /** @type {any} */
  let result;
  const client = await runLoadGenerator(CLIENT, spec, (message) => {
    if (message.event === 'measuring') {
      measureStart = Date.now();
      cpuBefore = processes.map((p) => cpuSeconds(p.pid));
      sampling.push(sample());
      sampler = setInterval(() => sampling.push(sample()), 1000);
      if (args['heap-snapshots']) liveHeap.start = snapshotAll();
    }
    if (message.event === 'result') {
      clearInterval(sampler);
      sampling.push(sample());
      result = message;
    }
  });
  if (result === undefined) throw new Error(`soak client exited ${client.code}:\n${client.stderr}`);
  const cpuAfter = processes.map((p) => cpuSeconds(p.pid));
  await Promise.all(sampling);
  // After the load: what is still alive once it stopped, against what was alive at its start.
  const liveStart = (await liveHeap.start) ?? [];
  const liveEnd = args['heap-snapshots'] ? await snapshotAll() : [];
  if (args['heap-snapshots']) rmSync(snapshotDir, { recursive: true, force: true });
  // The load is over: what each process holds once it has been idle a while (V8 shrinks its
  // heap, and Node 24's V8 gives pooled pages back, only at a memory-reducing collection).
  const idleAfterSec = Number(args['idle-after']);
  await sleep(idleAfterSec * 1000);
  const afterIdle = await Promise.all(
    processes.map(async (p) => ({
      rssMb: Number(rssMb(p.pid).toFixed(1)),
      heap: await heapMb(p.managementUrl),
    })),
  );

  const first = samples[0]?.rssMb ?? {};
  const last = samples[samples.length - 1]?.rssMb ?? {};
  const span = Number(args.duration);
  const firstHeap = samples[0]?.heapUsedMb ?? {};
  const lastHeap = samples[samples.length - 1]?.heapUsedMb ?? {};
  /** Lowest heap in use among samples in [fromSec, toSec): after a collection, what stays. */
  const heapFloor = (
    /** @type {string} */ name,
    /** @type {number} */ fromSec,
    /** @type {number} */ toSec,
  ) => {
    const values = samples
      .filter((x) => x.atSec >= fromSec && x.atSec < toSec)
      .map((x) => x.heapUsedMb[name])
      .filter((v) => typeof v === 'number');
    return values.length > 0 ? Math.min(.../** @type {number[]} */ (values)) : null;
  };
  /**
   * Median RSS among samples in [fromSec, toSec). RSS follows a GC sawtooth (a grant-heavy
   * process swings ±20 % over ~25 s as V8 lets garbage pile up, then collects it), so one
   * sample is not "the memory then": each half of the window (≥ one full cycle) is summed up
   * by its median, and the halves compared.
   */
  const rssMedian = (
    /** @type {string} */ name,
    /** @type {number} */ fromSec,
    /** @type {number} */ toSec,
  ) => {
    const values = samples
      .filter((x) => x.atSec >= fromSec && x.atSec < toSec)
      .map((x) => /** @type {number} */ (x.rssMb[name]))
      .sort((a, b) => a - b);
    return values.length > 0
      ? /** @type {number} */ (values[(values.length - 1) >> 1])
      : /** @type {number} */ (first[name]);
  };
  /**
   * Median of RSS minus the V8 heap's committed size: memory outside the JavaScript heap
   * (code, native buffers, malloc). A leak there shows here; V8 sizing its heap does not.
   */
  const nativeMedian = (
    /** @type {string} */ name,
    /** @type {number} */ fromSec,
    /** @type {number} */ toSec,
  ) => {
    const values = samples
      .filter(
        (x) => x.atSec >= fromSec && x.atSec < toSec && typeof x.heapTotalMb[name] === 'number',
      )
      .map(
        (x) => /** @type {number} */ (x.rssMb[name]) - /** @type {number} */ (x.heapTotalMb[name]),
      )
      .sort((a, b) => a - b);
    return values.length > 0
      ? Number(/** @type {number} */ (values[(values.length - 1) >> 1]).toFixed(1))
      : null;
  };
  const memory = processes.map((p, i) => {
    const half = span / 2;
    const startMb = rssMedian(p.name, 0, half);
    const endMb = rssMedian(p.name, half, span + 1);
    const nativeStartMb = nativeMedian(p.name, 0, half);
    const nativeEndMb = nativeMedian(p.name, half, span + 1);
    return {
      service: p.name,
      idleMb: Number(idle[i]?.toFixed(1)),
      startMb,
      endMb,
      growthPct: Number((((endMb - startMb) / startMb) * 100).toFixed(1)),
      nativeStartMb,
      nativeEndMb,
      firstSampleMb: first[p.name],
      lastSampleMb: last[p.name],
      heapStartMb: firstHeap[p.name] ?? null,
      heapEndMb: lastHeap[p.name] ?? null,
      heapFloorFirst15sMb: heapFloor(p.name, 0, 15),
      heapFloorLast15sMb: heapFloor(p.name, span - 15, span + 1),
      cpuSec: Number(((cpuAfter[i] ?? 0) - (cpuBefore[i] ?? 0)).toFixed(2)),
      rssMaxMb: Math.max(...samples.map((x) => x.rssMb[p.name] ?? 0)),
      heapTotalMaxMb: Math.max(...samples.map((x) => x.heapTotalMb[p.name] ?? 0)),
      newSpaceMaxMb: Math.max(...samples.map((x) => x.newSpaceMb[p.name] ?? 0)),
      oldSpaceMaxMb: Math.max(...samples.map((x) => x.oldSpaceMb[p.name] ?? 0)),
      afterIdle: {
        seconds: idleAfterSec,
        rssMb: afterIdle[i]?.rssMb ?? null,
        heapTotalMb: afterIdle[i]?.heap.total ?? null,
      },
      ...(args['heap-snapshots']
        ? { liveHeapStartMb: liveStart[i] ?? null, liveHeapEndMb: liveEnd[i] ?? null }
        : {}),
    };
  });
  const output = {
    date: new Date(started).toISOString(),
    machine: machine(),
    runtime,
    nodeOptions: Object.fromEntries(
      processes.map((p) => [p.name, imageNodeOptions(p.service) ?? null]),
    ),
    environment:
      'built JS, NODE_ENV=production, LOG_LEVEL=info, one process per service, loopback, load generator in its own process',
    workload: {
      workers: spec.workers,
      warmupSec: spec.warmupSec,
      durationSec: spec.durationSec,
      resetEveryMs: spec.resetEveryMs,
      mix: 'list 60 %, create 20 %, token grant 20 % (closed loop) + a rotator: reset, grant with the new secret, old token refused, new token accepted',
    },
    result,
    memory,
    rssSamples: samples,
  };
  mkdirSync(resultsDir, { recursive: true });
  const file = join(
    resultsDir,
    `${stamp}-soak${args.node === undefined ? '' : `-${runtime}`}.json`,
  );
  writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);

  const r = /** @type {any} */ (result);
  process.stdout.write(
    `\nPlant Store platform soak, ${output.date}, ${output.machine.cores} cores, services on node ${runtime}\n`,
  );
  process.stdout.write(
    `${spec.durationSec}s measured after ${spec.warmupSec}s warm-up: ${fmt(r.perSec)} req/s, p50 ${fmt(r.p50Ms, 2)} ms, p99 ${fmt(r.p99Ms, 2)} ms, ${r.errors} unexpected, ${r.intendedRefusals} intended refusals (old tokens after a reset)\n\n`,
  );
  process.stdout.write(
    `${table(
      ['operation', 'count', 'per s', 'p50 ms', 'p99 ms', 'max ms', 'unexpected'],
      r.operations.map((/** @type {any} */ o) => [
        o.op,
        String(o.count),
        fmt(o.perSec, 1),
        fmt(o.p50Ms, 2),
        fmt(o.p99Ms, 2),
        fmt(o.maxMs, 1),
        String(o.errors),
      ]),
    )}\n\n`,
  );
  process.stdout.write(
    `${table(
      [
        'process',
        'idle RSS MB',
        'RSS 1st half MB',
        'RSS 2nd half MB',
        'RSS growth',
        'outside V8 heap 1st → 2nd half MB',
        'heap floor first → last 15 s MB',
        'CPU s',
      ],
      memory.map((m) => [
        m.service,
        fmt(m.idleMb, 1),
        fmt(m.startMb, 1),
        fmt(m.endMb, 1),
        `${fmt(m.growthPct, 1)} %`,
        `${fmt(m.nativeStartMb, 1)} → ${fmt(m.nativeEndMb, 1)}`,
        `${fmt(m.heapFloorFirst15sMb, 1)} → ${fmt(m.heapFloorLast15sMb, 1)}`,
        fmt(m.cpuSec, 1),
      ]),
    )}\n\n`,
  );
  process.stdout.write(
    `${table(
      [
        'process',
        'RSS max MB',
        'V8 heap committed max MB (young; old)',
        `RSS ${idleAfterSec} s after the load MB`,
        'V8 heap committed then MB',
      ],
      memory.map((m) => [
        m.service,
        fmt(m.rssMaxMb, 1),
        `${fmt(m.heapTotalMaxMb, 1)} (${fmt(m.newSpaceMaxMb, 1)}; ${fmt(m.oldSpaceMaxMb, 1)})`,
        fmt(m.afterIdle.rssMb, 1),
        fmt(m.afterIdle.heapTotalMb, 1),
      ]),
    )}\n\n`,
  );
  if (args['heap-snapshots']) {
    const rows = memory.map((m) => [
      m.service,
      fmt(m.liveHeapStartMb, 1),
      fmt(m.liveHeapEndMb, 1),
      m.liveHeapStartMb && m.liveHeapEndMb
        ? `${fmt(((m.liveHeapEndMb - m.liveHeapStartMb) / m.liveHeapStartMb) * 100, 1)} %`
        : '—',
    ]);
    process.stdout.write(
      `${table(['process', 'live heap at start MB', 'live heap after the load MB', 'growth'], rows)}\n(live heap: V8 heap snapshots, each after a full GC)\n\n`,
    );
  }
  for (const m of memory) {
    const idleOk = m.idleMb <= TARGETS.idleRssMb;
    const growthOk = m.growthPct <= TARGETS.growthPct;
    process.stdout.write(
      `${m.service}: idle ${fmt(m.idleMb, 1)} MB (target ≤ ${TARGETS.idleRssMb}: ${idleOk ? 'met' : 'missed'}), RSS growth over the measured window ${fmt(m.growthPct, 1)} % (target ≤ ${TARGETS.growthPct} %: ${growthOk ? 'met' : 'missed'})\n`,
    );
  }
  process.stdout.write('\n');
  for (const o of r.operations)
    if (o.errors > 0) process.stdout.write(`${o.op}: ${o.errorSamples.join(' | ')}\n`);
  process.stdout.write(`written ${file.slice(ROOT.length + 1)}\n`);
  if (r.errors > 0) exitCode = 1;
} catch (err) {
  exitCode = 1;
  log(`failed: ${/** @type {Error} */ (err).stack ?? err}`);
  log(`service logs: ${logDir}`);
} finally {
  await session.close();
}
process.exit(exitCode);
