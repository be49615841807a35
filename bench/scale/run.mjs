#!/usr/bin/env node
// `pnpm bench:scale [-- --quick] [--only=revocation,realms,plants,audit]`: does every cost grow with
// what is live rather than with history? Each figure at three sizes (two for audit events),
// seeded with SQL and the operator tools as production data would look, on a database of its own
// (BENCH_SCALE_DATABASE_URL, default plantstore_bench_scale: dropped and created afresh at the
// start, dropped at the end), with the token service, two Plant Stores and account-admin as
// production runs them (built JS, NODE_ENV=production) and a redis-server of the run's own.
// Prints one table per part and the targets; writes bench/results/<date>-scale.json with a
// `targets` array ({name, value, target, met}). Build first (`pnpm build`).
import './scale-env.mjs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import * as lib from '../lib/platform.mjs';
import { fmt, machine, table } from '../lib/report.mjs';
import { realmsAtScale } from './realms.mjs';
import { revocationAtScale } from './revocation.mjs';
import { auditAtScale, plantsAtScale } from './tenant-data.mjs';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
});
const quick = args.quick;
const only = args.only ? new Set(args.only.split(',')) : undefined;
const SIZES = quick
  ? {
      revocation: [100, 1_000, 10_000],
      realms: [10, 100, 1_000],
      plants: [10_000, 100_000, 1_000_000],
      audit: [10_000, 100_000],
    }
  : {
      revocation: [1_000, 10_000, 100_000],
      realms: [100, 1_000, 10_000],
      plants: [10_000, 100_000, 1_000_000],
      audit: [10_000, 1_000_000],
    };
/** REVOCATION_RESYNC_MS of the Plant Stores: a fifth of the default, so a minute holds sixty resyncs to measure. */
const RESYNC_MS = 1000;
const stamp = new Date()
  .toISOString()
  .replace(/\.\d+Z$/, 'Z')
  .replace(/:/g, '-');
const log = (/** @type {string} */ msg) => process.stderr.write(`[bench:scale] ${msg}\n`);
const started = Date.now();
const loadAtStart = machine().loadAverage1m;

if (lib.missingServices().length > 0) {
  log(`built services missing: ${lib.missingServices().join(', ')} (run \`pnpm build\` first)`);
  process.exit(1);
}
await recreateDatabase(lib.DATABASE_URL);
await lib.migrate();
const db = await lib.connect();
const logDir = join(lib.ROOT, 'bench/results/logs', `scale-${stamp}`);
const platform = await lib.startPlatform({
  logDir,
  plantStoreCount: 2,
  accountAdmin: true,
  ownRedis: true,
  resyncMs: RESYNC_MS,
  listenerIssuers: true,
});
const ctx = { platform, db, log, quick };
/** @type {Record<string, any>} */
const parts = {};
let exitCode = 0;
/**
 * Runs one part; a part that fails is reported and the others still run.
 * @param {string} name
 * @param {() => Promise<any>} run
 */
async function part(name, run) {
  if (only && !only.has(name)) return;
  try {
    parts[name] = await run();
  } catch (err) {
    exitCode = 1;
    parts[name] = {
      failed: /** @type {Error} */ (err).message.split('\n')[0],
      rows: [],
      targets: [],
    };
    log(`${name} failed: ${/** @type {Error} */ (err).stack ?? err}`);
    log(`service logs: ${logDir}`);
  }
}
try {
  const secrets = {
    keyEncryptionKey: platform.secrets.KEY_ENCRYPTION_KEY,
    pepper: platform.secrets.SECRET_PEPPER,
  };
  await part('revocation', () => revocationAtScale(ctx, SIZES.revocation));
  await part('realms', () =>
    realmsAtScale(
      { ...ctx, secrets, prefix: `scale${stamp.slice(11, 19).replace(/-/g, '')}` },
      SIZES.realms,
    ),
  );
  await part('plants', () => plantsAtScale(ctx, SIZES.plants));
  await part('audit', () => auditAtScale(ctx, SIZES.audit));
} finally {
  await lib.stopPlatform(platform);
  await db.end();
  await dropDatabase(lib.DATABASE_URL).catch((/** @type {Error} */ err) =>
    log(`could not drop the scale database: ${err.message}`),
  );
}

const targets = Object.values(parts).flatMap((part) => part.targets);
const output = {
  benchmark: 'scale',
  date: new Date(started).toISOString(),
  quick,
  machine: { ...machine(), loadAverage1mAtStart: loadAtStart },
  settings: {
    sizes: SIZES,
    revocationResyncMs: RESYNC_MS,
    plantStores: 2,
    environment:
      'built JS, NODE_ENV=production, LOG_LEVEL=info, one process per service, loopback, autocannon in its own process, 10 connections',
  },
  parts,
  targets,
  elapsedSec: Math.round((Date.now() - started) / 1000),
};
const file = join(
  lib.ROOT,
  'bench/results',
  `${stamp}-scale${quick ? '-quick' : ''}${only || exitCode !== 0 ? '-partial' : ''}.json`,
);
mkdirSync(join(lib.ROOT, 'bench/results'), { recursive: true });
writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);

const out = (/** @type {string} */ s) => process.stdout.write(`${s}\n`);
out(
  `\nPlant Store platform at scale, ${output.date}, ${output.machine.cores} cores (${output.machine.cpuModel}), node ${process.version}, load average ${loadAtStart} → ${output.machine.loadAverage1m}`,
);
if (parts.revocation?.rows.length) {
  out(
    '\nRevocation: principals revoked (deleted or reset) more than a token lifetime ago, beside 1,000 live accounts; Plant Stores resync every 1 s\n',
  );
  out(
    table(
      [
        'revoked',
        'old-design snapshot entries',
        'store rows (before → after pruning)',
        'snapshot bytes',
        'bytes / quiet resync',
        'CPU ms / min / store',
        'map entries',
        'revocation p50 ms',
        'p99 ms',
        'max ms',
      ],
      parts.revocation.rows.map((/** @type {any} */ r) => [
        String(r.size),
        String(r.oldDesignSnapshotEntries),
        `${r.storeRowsBeforePruning.changes} → ${r.storeRowsAfterPruning.changes}`,
        String(r.snapshotBytes),
        fmt(r.bytesPerQuietResync, 1),
        fmt(r.cpuMsPerMinute, 0),
        String(r.mapEntries),
        fmt(r.revocation.p50Ms, 2),
        fmt(r.revocation.p99Ms, 2),
        fmt(r.revocation.maxMs, 2),
      ]),
    ),
  );
}
if (parts.realms?.rows.length) {
  out(`\nRealms in use, grants and lists round-robin over all of them (${parts.realms.note})\n`);
  out(
    table(
      [
        'realms',
        'grant req/s',
        'grant p99 ms',
        'grant CPU µs/req',
        'token-service RSS MB',
        'providers cached',
        'keys cached',
        'provider builds so far',
        'list req/s',
        'list p99 ms',
        'list CPU µs/req',
        'Plant Store RSS MB',
        'heap used / total MB',
        'JWKS realms cached',
        'verified tokens cached',
      ],
      parts.realms.rows.map((/** @type {any} */ r) => [
        String(r.size),
        fmt(r.grantRps),
        fmt(r.grantP99Ms, 2),
        fmt(r.grantCpuUsPerReq),
        fmt(r.tokenServiceRssMb),
        String(r.providersCached),
        String(r.keysCached),
        String(r.providerBuildsSoFar),
        fmt(r.listRps),
        fmt(r.listP99Ms, 2),
        fmt(r.listCpuUsPerReq),
        fmt(r.plantStoreRssMb),
        `${fmt(r.plantStoreMemory.heapUsedMb)} / ${fmt(r.plantStoreMemory.heapTotalMb)}`,
        String(r.jwksRealmsCached),
        String(r.verifiedTokensCached),
      ]),
    ),
  );
}
if (parts.plants?.rows.length) {
  out(
    '\nPlants of one tenant: GET /plants?limit=100 (first page; a page reached through 1,000 cursors, near the far end), POST /plants\n',
  );
  out(
    table(
      [
        'plants',
        'first page p99 ms',
        'req/s',
        'deep page p99 ms',
        'req/s',
        'create p99 ms',
        'req/s',
      ],
      parts.plants.rows.map((/** @type {any} */ r) => [
        String(r.size),
        fmt(r.firstPageP99Ms, 2),
        fmt(r.firstPageRps),
        fmt(r.deepPageP99Ms, 2),
        fmt(r.deepPageRps),
        fmt(r.createP99Ms, 2),
        fmt(r.createRps),
      ]),
    ),
  );
}
if (parts.audit?.rows.length) {
  out("\nAudit events of one tenant: the portal's Activity page, signed in\n");
  out(
    table(
      ['events', 'Activity p99 ms', 'req/s'],
      parts.audit.rows.map((/** @type {any} */ r) => [
        String(r.size),
        fmt(r.activityP99Ms, 2),
        fmt(r.activityRps),
      ]),
    ),
  );
}
out('\nTargets (ratios within this run)\n');
out(
  table(
    ['target', 'value', 'bound', 'met'],
    targets.map((t) => [
      t.name,
      t.value === null ? '—' : String(t.value),
      t.target,
      t.met ? 'met' : 'NOT met',
    ]),
  ),
);
for (const [name, p] of Object.entries(parts)) if (p.failed) out(`\n${name}: FAILED: ${p.failed}`);
out(`\nwritten ${file.slice(lib.ROOT.length + 1)} in ${output.elapsedSec} s`);
process.exit(exitCode);

/** @param {string} url */
async function recreateDatabase(url) {
  await dropDatabase(url);
  // lib.migrate creates it.
}

/** @param {string} url */
async function dropDatabase(url) {
  const admin = new URL(url);
  const name = decodeURIComponent(admin.pathname.slice(1));
  if (!/^plantstore_bench_scale\w*$/.test(name))
    throw new Error(
      `refusing to drop ${name}: bench:scale drops only plantstore_bench_scale databases`,
    );
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await client.end();
  }
}
