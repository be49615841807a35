// The soak's load generator, its own process: `BENCH_LOAD_SPEC='<json>' node bench/load/soak-client.mjs`
// (the spec holds bench accounts' secrets: in the environment, not on the command line `ps` shows).
// Closed-loop workers mix token grants, creates and lists; one rotator resets a service
// account's secret through the internal API every `resetEveryMs` and checks what a reset
// must do: the new secret works at once, the token minted before the reset is refused (401,
// an intended refusal, counted apart from errors, checked 50 ms after the reset answered),
// the token minted after it works.
// Prints {"event":"measuring"} after the warm-up, then {"event":"result", ...}.
import { Agent, request as httpRequest } from 'node:http';

/**
 * @typedef {{client_id: string, secret: string}} Account
 * @typedef {object} SoakSpec
 * @property {string} plantStoreUrl
 * @property {string} tokenUrl              base URL of the token service's public port
 * @property {string} internalUrl           base URL of its internal API
 * @property {string} internalToken
 * @property {string} tenant
 * @property {{reader: Account, writer: Account, rotator: Account}} accounts
 * @property {{reader: string, writer: string}} tokens
 * @property {number} workers
 * @property {number} warmupSec
 * @property {number} durationSec
 * @property {number} resetEveryMs
 * @property {number} firstId
 */

/** @type {SoakSpec} */
const spec = JSON.parse(process.env.BENCH_LOAD_SPEC ?? '{}');
const agent = new Agent({ keepAlive: true, maxSockets: spec.workers + 4 });

/**
 * @param {string} url
 * @param {{method?: string, headers?: Record<string, string>, body?: string}} init
 * @returns {Promise<{status: number, body: string, ms: number}>}
 */
function send(url, { method = 'GET', headers = {}, body } = {}) {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method,
        headers:
          body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
        agent,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Per operation: latencies of the measured window, unexpected outcomes, intended refusals. */
const stats = new Map();
let measuring = false;
/**
 * @param {string} op
 * @param {number} ms
 * @param {boolean} ok
 * @param {string} [detail]
 */
function record(op, ms, ok, detail) {
  if (!measuring) return;
  let s = stats.get(op);
  if (!s) {
    s = { latencies: [], errors: 0, errorSamples: [] };
    stats.set(op, s);
  }
  s.latencies.push(ms);
  if (!ok) {
    s.errors += 1;
    if (s.errorSamples.length < 5 && detail) s.errorSamples.push(detail);
  }
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const grantBody = (/** @type {Account} */ a) =>
  new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: a.client_id,
    client_secret: a.secret,
  }).toString();
const tokenEndpoint = `${spec.tokenUrl}/realms/${spec.tenant}/protocol/openid-connect/token`;
const internalHeaders = {
  authorization: `Bearer ${spec.internalToken}`,
  'content-type': 'application/json',
};

let nextId = spec.firstId;
/** @type {Record<string, () => Promise<void>>} */
const operations = {
  async grant() {
    const r = await send(tokenEndpoint, {
      method: 'POST',
      headers: form,
      body: grantBody(spec.accounts.writer),
    });
    record('token grant', r.ms, r.status === 200, `${r.status} ${r.body.slice(0, 120)}`);
  },
  async list() {
    const r = await send(`${spec.plantStoreUrl}/plants?limit=20`, {
      headers: { authorization: `Bearer ${spec.tokens.reader}` },
    });
    record('list', r.ms, r.status === 200, `${r.status} ${r.body.slice(0, 120)}`);
  },
  async create() {
    nextId += 1;
    const r = await send(`${spec.plantStoreUrl}/plants`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${spec.tokens.writer}`,
        'content-type': 'application/json',
      },
      body: `{"id":${nextId},"name":"Ficus lyrata","tag":"soak"}`,
    });
    record('create', r.ms, r.status === 200, `${r.status} ${r.body.slice(0, 120)}`);
  },
};
/** Weights of the closed-loop mix: mostly reads, as a plant catalogue is used. */
const MIX = [
  ['list', 6],
  ['create', 2],
  ['grant', 2],
];
const wheel = MIX.flatMap(([op, weight]) =>
  Array.from({ length: /** @type {number} */ (weight) }, () => /** @type {string} */ (op)),
);

let stopping = false;
/** @param {number} seed */
async function worker(seed) {
  let i = seed;
  while (!stopping) {
    const op = /** @type {string} */ (wheel[i++ % wheel.length]);
    try {
      await /** @type {() => Promise<void>} */ (operations[op])();
    } catch (err) {
      record(op, 0, false, String(/** @type {Error} */ (err).message));
    }
  }
}

/**
 * The list and create workers' tokens are renewed every minute, as automation renews tokens
 * before they expire (300 s): a soak longer than a token's life would otherwise measure 401s.
 */
async function refreshTokens() {
  let elapsedMs = 0;
  while (!stopping) {
    await new Promise((r) => setTimeout(r, 1000));
    elapsedMs += 1000;
    if (stopping || elapsedMs % 60_000 !== 0) continue;
    for (const role of /** @type {const} */ (['reader', 'writer'])) {
      const r = await send(tokenEndpoint, {
        method: 'POST',
        headers: form,
        body: grantBody(spec.accounts[role]),
      });
      record('token refresh', r.ms, r.status === 200, `${r.status} ${r.body.slice(0, 120)}`);
      if (r.status === 200) spec.tokens[role] = JSON.parse(r.body).access_token;
    }
  }
}

let refusals = 0;
async function rotator() {
  let secret = spec.accounts.rotator.secret;
  let token = await mint(secret);
  while (!stopping) {
    await new Promise((r) => setTimeout(r, spec.resetEveryMs));
    if (stopping) break;
    const before = token;
    const reset = await send(
      `${spec.internalUrl}/internal/v1/realms/${spec.tenant}/service-accounts/${spec.accounts.rotator.client_id}/reset-secret`,
      {
        method: 'POST',
        headers: internalHeaders,
        body: '{"actor":"bench-soak"}',
      },
    );
    record(
      'reset (internal API)',
      reset.ms,
      reset.status === 200,
      `${reset.status} ${reset.body.slice(0, 120)}`,
    );
    if (reset.status !== 200) continue;
    secret = JSON.parse(reset.body).secret;
    const fresh = await send(tokenEndpoint, {
      method: 'POST',
      headers: form,
      body: grantBody({ client_id: spec.accounts.rotator.client_id, secret }),
    });
    record(
      'grant after reset',
      fresh.ms,
      fresh.status === 200,
      `${fresh.status} ${fresh.body.slice(0, 120)}`,
    );
    if (fresh.status === 200) token = JSON.parse(fresh.body).access_token;
    // Revocation reaches every replica within 50 ms of the reset's answer (the contract's
    // ceiling); its latency is the revocation scenario's subject, not this one's.
    await new Promise((r) => setTimeout(r, Math.max(0, 50 - fresh.ms)));
    const old = await send(`${spec.plantStoreUrl}/plants?limit=1`, {
      headers: { authorization: `Bearer ${before}` },
    });
    // The intended 4xx: a token minted before the reset must be refused.
    record(
      'old token refused',
      old.ms,
      old.status === 401,
      `${old.status} (expected 401) ${old.body.slice(0, 120)}`,
    );
    if (old.status === 401 && measuring) refusals += 1;
    const now = await send(`${spec.plantStoreUrl}/plants?limit=1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    record(
      'new token accepted',
      now.ms,
      now.status === 200,
      `${now.status} ${now.body.slice(0, 120)}`,
    );
  }
}

/** @param {string} secret */
async function mint(secret) {
  const r = await send(tokenEndpoint, {
    method: 'POST',
    headers: form,
    body: grantBody({ client_id: spec.accounts.rotator.client_id, secret }),
  });
  if (r.status !== 200)
    throw new Error(`rotator grant answered ${r.status}: ${r.body.slice(0, 200)}`);
  return JSON.parse(r.body).access_token;
}

/**
 * @param {number[]} sorted
 * @param {number} q
 */
const quantile = (sorted, q) =>
  sorted.length === 0
    ? null
    : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

const running = [
  ...Array.from({ length: spec.workers }, (_, i) => worker(i * 3)),
  rotator(),
  refreshTokens(),
];
await new Promise((r) => setTimeout(r, spec.warmupSec * 1000));
measuring = true;
process.stdout.write(`${JSON.stringify({ event: 'measuring' })}\n`);
const started = process.hrtime.bigint();
await new Promise((r) => setTimeout(r, spec.durationSec * 1000));
measuring = false;
const elapsedSec = Number(process.hrtime.bigint() - started) / 1e9;
stopping = true;
await Promise.allSettled(running);

const all = [];
const operationsOut = [];
for (const [op, s] of stats) {
  s.latencies.sort((/** @type {number} */ a, /** @type {number} */ b) => a - b);
  // A loop, not push(...spread): a long soak collects more latencies than a call's argument limit.
  for (const latency of s.latencies) all.push(latency);
  operationsOut.push({
    op,
    count: s.latencies.length,
    perSec: s.latencies.length / elapsedSec,
    p50Ms: quantile(s.latencies, 0.5),
    p99Ms: quantile(s.latencies, 0.99),
    maxMs: s.latencies[s.latencies.length - 1] ?? null,
    errors: s.errors,
    errorSamples: s.errorSamples,
  });
}
all.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({
    event: 'result',
    elapsedSec,
    requests: all.length,
    perSec: all.length / elapsedSec,
    p50Ms: quantile(all, 0.5),
    p99Ms: quantile(all, 0.99),
    errors: operationsOut.reduce((n, o) => n + o.errors, 0),
    intendedRefusals: refusals,
    operations: operationsOut,
  })}\n`,
);
agent.destroy();
