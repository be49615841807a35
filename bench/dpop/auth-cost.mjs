#!/usr/bin/env node
// `node bench/dpop/auth-cost.mjs [--requests=20000] [--concurrency=10]`: the CPU one request's
// authentication costs in-process, DPoP against Bearer, without HTTP, Postgres or a load
// generator on the same cores: createBearerAuth as the Plant Store builds it (real Redis,
// BENCH_REDIS_URL, default db 7; the test issuer's keys), each request inside an
// AsyncLocalStorage context as the Plant Store's are (its promise hooks are part of the cost).
// Process CPU and the main thread's per request, alternating Bearer and DPoP windows; plus the
// ES256 verification alone, in place and on the thread pool. Build first (`pnpm build`).
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createLogger } from '@plant/shared/logging';
import { createBearerAuth, createRedisReplayStore } from '@plant/resource-auth';
import { dpopKey, startTestIssuer } from '@plant/test-kit';
import { stepCosts } from './step-costs.mjs';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
  },
});
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/7';
const AUTH_URL = 'http://auth.bench:8082';
const AUDIENCE = 'http://plants.bench';
const PUBLIC_URL = 'https://plants.bench.example';

const ticks = 1e6 / 100;
/** CPU µs of this process's main thread (`/proc`, clock ticks of 10 ms: windows are long). */
const mainCpuUs = () => {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * ticks;
};

const issuer = await startTestIssuer({ authUrl: AUTH_URL, audience: AUDIENCE });
const tenant = `cost${Date.now()}`;
issuer.addRealm(tenant);
const logger = createLogger({ name: 'auth-cost', level: 'silent' });
const replay = createRedisReplayStore({
  redis: REDIS_URL,
  keyPrefix: `bench:dpop-cost:${process.pid}:`,
});
const auth = createBearerAuth({
  authUrl: AUTH_URL,
  audience: AUDIENCE,
  jwksBaseUrl: issuer.url,
  internalToken: 'bench',
  realm: 'plants',
  logger,
  dpop: { publicUrl: PUBLIC_URL, replay },
});
const key = dpopKey('ES256');
const bound = issuer.mint({ tenant, claims: { cnf: { jkt: key.thumbprint } } });
const bearer = issuer.mint({ tenant });
const context = new AsyncLocalStorage();
/** Requests refused, by reason (none expected: a refusal is cheaper than a success and skews the figure). */
const refusals = new Map();
const res = { setHeader() {} };

/**
 * @param {'bearer' | 'dpop'} kind
 * @param {number} count
 */
function requests(kind, count) {
  const url = '/plants?limit=20';
  if (kind === 'bearer')
    return Array.from({ length: count }, () => ({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${bearer}` },
    }));
  return Array.from({ length: count }, () => ({
    method: 'GET',
    url,
    headers: {
      authorization: `DPoP ${bound}`,
      dpop: key.proof({ htm: 'GET', htu: `${PUBLIC_URL}/plants`, token: bound }),
    },
  }));
}

/** @param {'bearer' | 'dpop'} kind */
async function window(kind) {
  const batch = requests(kind, REQUESTS);
  const cpu = process.cpuUsage();
  const main = mainCpuUs();
  let next = 0;
  const worker = async () => {
    while (next < batch.length) {
      const req = batch[next++];
      await context
        .run({ requestId: next }, () =>
          auth.authenticate(/** @type {any} */ (req), /** @type {any} */ (res)),
        )
        .catch((/** @type {Error} */ err) => {
          refusals.set(err.message, (refusals.get(err.message) ?? 0) + 1);
        });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / REQUESTS, mainUs: (mainCpuUs() - main) / REQUESTS };
}

await window('bearer');
await window('dpop');
/** @type {{round: number, kind: string, cpuUs: number, mainUs: number}[]} */
const rows = [];
for (let round = 0; round < Number(values.rounds); round += 1) {
  /** @type {('bearer' | 'dpop')[]} */
  const order = round % 2 === 0 ? ['bearer', 'dpop'] : ['dpop', 'bearer'];
  for (const kind of order) rows.push({ round, kind, ...(await window(kind)) });
}
const median = (/** @type {number[]} */ xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const of = (/** @type {string} */ kind, /** @type {'cpuUs' | 'mainUs'} */ field) =>
  median(rows.filter((r) => r.kind === kind).map((r) => r[field]));
const steps = await stepCosts(key, 5000);
const loadAverage = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
process.stdout.write(
  `${JSON.stringify({ requests: REQUESTS, concurrency: CONCURRENCY, loadAverage, bearer: { cpuUs: of('bearer', 'cpuUs'), mainUs: of('bearer', 'mainUs') }, dpop: { cpuUs: of('dpop', 'cpuUs'), mainUs: of('dpop', 'mainUs') }, refusals: Object.fromEntries(refusals), steps, rows }, null, 1)}\n`,
);
auth.close();
await replay.close();
await issuer.close();
process.exit(0);
