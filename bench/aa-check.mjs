#!/usr/bin/env node
// `node bench/aa-check.mjs [--rounds=6]`: the bench's method checked against itself. The stock
// oidc-provider baseline is measured against itself exactly as `pnpm bench` measures ours
// against a baseline (alternating windows, median of the rounds' ratios). The result should
// be 1.00: how far the per-round ratios stray shows how much of a ratio is the machine.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DATABASE_URL, grantBody, issuerOf, PLANT_STORE_AUDIENCE, ROOT } from './lib/platform.mjs';
import { measurePair } from './lib/load.mjs';
import { startServer } from './lib/processes.mjs';
import { ratios } from './lib/report.mjs';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '6' } } });
const logDir = join(
  ROOT,
  'bench/results/logs',
  `aa-${new Date().toISOString().replace(/[:.]/g, '-')}`,
);
mkdirSync(logDir, { recursive: true });
const client = { id: 'aa-client', secret: 'aa-secret-0123456789abcdef' };
const server = await startServer({
  name: 'aa-oidc-provider',
  script: join(ROOT, 'bench/baselines/oidc-provider-server.mjs'),
  env: {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    PORT: '0',
    ISSUER: issuerOf('aa'),
    AUDIENCE: PLANT_STORE_AUDIENCE,
    CLIENT_ID: client.id,
    CLIENT_SECRET: client.secret,
  },
  logDir,
});
const target = {
  spec: {
    url: server.url,
    method: 'POST',
    path: '/protocol/openid-connect/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: grantBody(client.id, client.secret),
  },
  pids: [server.pid],
};
const db = new pg.Client({ connectionString: DATABASE_URL });
await db.connect();
try {
  const pair = await measurePair(
    { ours: target, baseline: target },
    {
      connections: 10,
      warmupSec: 1,
      firstWarmupSec: 3,
      durationSec: 3,
      rounds: Number(args.rounds),
    },
    db,
  );
  const r = ratios(pair);
  const list = (/** @type {number[] | undefined} */ xs) =>
    (xs ?? []).map((x) => x.toFixed(2)).join(' ');
  process.stdout.write(
    `A/A req/s ratio ${r.rps?.toFixed(2)} (rounds: ${list(r.perRound?.rps)}), CPU/req ratio ${r.cpuPerRequest?.toFixed(2)} (rounds: ${list(r.perRound?.cpuPerRequest)})\n`,
  );
} finally {
  await db.end();
  await server.stop();
}
