// `pnpm bench -- --pgbouncer [--quick]`: the list and create scenarios through PgBouncer
// (Debian's, transaction pooling, started here in front of the bench database) against the
// same Plant Store straight to Postgres, in the same run, windows alternating as in every
// scenario: ours = a Plant Store whose DATABASE_URL is the pooler (DATABASE_NAMED_STATEMENTS=
// false: the pooler cannot carry named statements), baseline = the platform's own Plant Store
// (direct, named statements). A second pair prices the unnamed statements alone: a direct
// Plant Store with DATABASE_NAMED_STATEMENTS=false against the same baseline.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPgBouncer } from '@plant/test-kit';
import { measurePair } from './load.mjs';
import { DATABASE_URL, grantToken, ROOT } from './platform.mjs';
import { machine, ratios, summaryTable } from './report.mjs';
import { openSession } from './session.mjs';
import * as listScenario from '../scenarios/list.mjs';
import * as createScenario from '../scenarios/create.mjs';

/** Debian's Postgres socket directory. */
const SOCKET_DIR = '/var/run/postgresql';
/** The target: through the pooler at least this share of the direct throughput. */
export const POOLED_TARGET = 0.9;
/** Server connections per pool: the Plant Store's own pool size (DATABASE_POOL_MAX), so both sides may hold as many. */
const POOL_SIZE = 10;
/**
 * Ids of created plants: each pair starts `PAIR_IDS` above the last, its pooled side `ID_OFFSET`
 * above its direct side (a window creates far fewer; measurePair adds 10 million a round).
 */
const ID_OFFSET = 5_000_000;
const PAIR_IDS = 100_000_000;

/**
 * @param {{stamp: string, logDir: string, load: {connections: number, warmupSec: number, firstWarmupSec: number, durationSec: number, rounds: number}, log: (msg: string) => void}} options
 * @returns {Promise<number>} the exit code
 */
export async function runPooledBench({ stamp, logDir, load, log }) {
  const started = Date.now();
  const session = await openSession({
    stamp,
    logDir,
    accounts: { reader: 'View', writer: 'Edit' },
    plants: 10_000,
    log,
  });
  const database = new URL(DATABASE_URL).pathname.slice(1);
  const pgbouncer = await startPgBouncer({
    serverUrl: DATABASE_URL,
    // Where PgBouncer usually runs, on the database's machine: it reaches Postgres by its socket (when there is one).
    ...(existsSync(`${SOCKET_DIR}/.s.PGSQL.${new URL(DATABASE_URL).port || 5432}`)
      ? { serverSocketDir: SOCKET_DIR }
      : {}),
    // The bench connects as one role for every schema: the pooler gives each server connection the Plant Store's search_path.
    databases: { [database]: { dbname: database, connectQuery: 'set search_path to plants' } },
    users: { postgres: 'bench-only-pgbouncer-password' },
    poolSize: POOL_SIZE,
  });
  try {
    const { platform, tenant, accounts } = session;
    const direct = platform.plantStores[0];
    const pooled = await platform.startPlantStore({
      DATABASE_URL: pgbouncer.urlOf(database, 'postgres'),
      DATABASE_NAMED_STATEMENTS: 'false',
    });
    const unnamed = await platform.startPlantStore({ DATABASE_NAMED_STATEMENTS: 'false' });
    const tokens = {
      reader: await grantToken(platform, tenant, accounts.reader),
      writer: await grantToken(platform, tenant, accounts.writer),
    };
    const noBaselines = {
      naive: { url: '', pid: 0 },
      oidc: { url: '', pid: 0 },
      oidcClient: { id: '', secret: '' },
    };
    /** @type {any[]} */
    const scenarios = [];
    for (const scenario of [listScenario, createScenario]) {
      const { ours: base } = scenario.targets(
        /** @type {any} */ ({ platform, tenant, accounts, tokens, baselines: noBaselines }),
      );
      /** @param {{url: string, pid: number}} store @param {number[]} pids @param {number} offset */
      const through = (store, pids, offset) => retargeted(base, store, pids, offset);
      for (const [pairIndex, [label, store, pids]] of /** @type {const} */ ([
        ['via PgBouncer', pooled, [pooled.pid, pgbouncer.pid]],
        ['direct, unnamed', unnamed, [unnamed.pid]],
      ]).entries()) {
        const offset = pairIndex * PAIR_IDS + ID_OFFSET;
        const target = through(store, [...pids], offset);
        await checkOnce(scenario.name, label, target, offset);
        log(`${scenario.name} ${label}: ${load.rounds} round(s) of ${load.durationSec}s per side`);
        const pair = await measurePair(
          { ours: target, baseline: through(direct, [direct.pid], pairIndex * PAIR_IDS) },
          load,
          session.db,
        );
        scenarios.push({
          scenario: `${scenario.name}`,
          labels: [label, 'direct, named'],
          what: scenario.what,
          ...pair,
          ratio: ratios(pair),
        });
      }
    }
    writeReport({ stamp, started, load, scenarios });
    return 0;
  } finally {
    await session.close();
    await pgbouncer.stop();
  }
}

/**
 * A scenario's target moved to another Plant Store: its URL, the pids to sample, and plant ids
 * `offset` above the original's so the two sides never create the same plant.
 * @param {any} base @param {{url: string}} store @param {number[]} pids @param {number} offset
 */
function retargeted(base, store, pids, offset) {
  const plant = /** @type {{idStart: number} | undefined} */ (base.spec.plant);
  return {
    ...base,
    spec: {
      ...base.spec,
      url: store.url,
      ...(plant ? { plant: { ...plant, idStart: plant.idStart + offset } } : {}),
    },
    pids,
  };
}

/**
 * One request of the scenario before measuring: a side that cannot answer 200 stops the bench.
 * @param {string} name @param {string} label @param {any} target @param {number} offset
 */
async function checkOnce(name, label, target, offset) {
  const check = await fetch(
    `${target.spec.url}${name === 'list' ? '/plants?limit=20' : '/plants'}`,
    {
      method: name === 'list' ? 'GET' : 'POST',
      headers: /** @type {Record<string, string>} */ (target.spec.headers),
      ...(name === 'create'
        ? { body: JSON.stringify({ id: 999_000 + offset, name: 'check', tag: 'bench' }) }
        : {}),
    },
  );
  if (check.status !== 200)
    throw new Error(`${name} ${label}: ${check.status} ${await check.text()}`);
}

/**
 * Writes bench/results/<stamp>-pgbouncer.json and prints the table and the target's verdict.
 * @param {{stamp: string, started: number, load: {connections: number, durationSec: number, rounds: number}, scenarios: any[]}} run
 */
function writeReport({ stamp, started, load, scenarios }) {
  const output = {
    date: new Date(started).toISOString(),
    variant: 'pgbouncer',
    machine: machine(),
    load,
    poolSize: POOL_SIZE,
    scenarios,
    elapsedSec: Math.round((Date.now() - started) / 1000),
  };
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${stamp}-pgbouncer.json`);
  writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
  process.stdout.write(
    `\nPlant Store through PgBouncer (transaction pooling, ${POOL_SIZE} server connections) against direct, ${output.date}, ${output.machine.cores} cores, load average ${output.machine.loadAverage1m}\n`,
  );
  process.stdout.write(
    `${load.connections} connections; ${load.rounds} round(s) × ${load.durationSec}s per side; ratios > 1 are better than direct\n\n${summaryTable({ scenarios, revocation: undefined, memory: [] })}\n\n`,
  );
  for (const s of scenarios.filter((x) => x.labels[0] === 'via PgBouncer')) {
    process.stdout.write(
      `${s.scenario} via PgBouncer: ${s.ratio.rps.toFixed(2)}× direct req/s, target ≥ ${POOLED_TARGET}× -> ${s.ratio.rps >= POOLED_TARGET ? 'met' : 'missed'}\n`,
    );
  }
  process.stdout.write(`written ${file.slice(ROOT.length + 1)} in ${output.elapsedSec}s\n`);
}
