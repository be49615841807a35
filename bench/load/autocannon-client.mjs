// The load generator, always its own process (never in the orchestrator or a server):
// `BENCH_LOAD_SPEC='<json>' node bench/load/autocannon-client.mjs` (in the environment, not on the
// command line: the spec holds bench accounts' secrets, and `ps` shows arguments). Runs a warm-up, prints
// {"event":"measuring"} (the orchestrator then reads the servers' CPU time), runs the measured
// window, prints {"event":"result", ...} with every response's latency at sub-millisecond
// precision (autocannon's own histogram keeps whole milliseconds).
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { assertionGrantBody, clientAssertion } from '@plant/test-kit';
import { proofSource } from './dpop-proofs.mjs';

/**
 * @typedef {object} LoadSpec
 * @property {string} url            base URL of the server
 * @property {'GET'|'POST'} method
 * @property {string} path
 * @property {Record<string, string>} headers
 * @property {string} [body]         fixed body
 * @property {{idStart: number, name: string, tag: string}} [plant]  a NewPlant body with a fresh id per request
 * @property {{clientId: string, audience: string, privateKeyPem: string, kid: string, alg: string, count?: number}} [assertion]  a private_key_jwt grant with a fresh assertion per request
 * @property {import('./dpop-proofs.mjs').ProofSpec} [dpop]  a fresh DPoP proof per request, in the DPoP header
 * @property {boolean} [rebuildEachRequest]  build every request anew, as a fresh proof or body makes autocannon do:
 *   the load generator's own cost per request then matches a side that sends one
 * @property {{path?: string, body?: string, headers?: Record<string, string>}[]} [rotate]  per request the next of these
 *   (round-robin over all connections) overrides path, body and headers: load spread over many realms or tokens
 * @property {number} connections
 * @property {number} warmupSec
 * @property {number} durationSec
 */

/** @type {LoadSpec} */
const spec = JSON.parse(
  process.env.BENCH_LOAD_SPEC_FILE
    ? readFileSync(process.env.BENCH_LOAD_SPEC_FILE, 'utf8')
    : (process.env.BENCH_LOAD_SPEC ?? '{}'),
);
let nextId = spec.plant?.idStart ?? 0;
const proofs = spec.dpop === undefined ? undefined : proofSource(spec.dpop);
/** Proofs signed ahead per second of a window: above the fastest list measured here. */
const PROOFS_PER_SECOND = 9000;

/**
 * Assertions signed before the windows, so signing is not in the measured time: enough for
 * 3,000 grants a second over the warm-up and the window (more than the token service serves
 * here); past them, each is signed on the spot.
 */
const PRESIGNED = spec.assertion?.count ?? Math.ceil(3000 * (spec.warmupSec + spec.durationSec));
const assertionBodies = (() => {
  const given = spec.assertion;
  if (given === undefined) return undefined;
  const key = /** @type {import('@plant/test-kit').ClientKeyPair} */ (
    /** @type {unknown} */ ({ alg: given.alg, privateKey: createPrivateKey(given.privateKeyPem) })
  );
  const sign = () =>
    assertionGrantBody(
      given.clientId,
      clientAssertion({
        clientId: given.clientId,
        audience: given.audience,
        key,
        kid: given.kid,
        claims: { exp: Math.floor(Date.now() / 1000) + 240 },
      }),
    );
  const ready = Array.from({ length: PRESIGNED }, sign);
  return { next: () => ready.pop() ?? sign() };
})();
let turn = 0;

function request() {
  /** @type {Record<string, unknown>} */
  const base = { method: spec.method, path: spec.path, headers: spec.headers };
  if (spec.body !== undefined) base.body = spec.body;
  if (assertionBodies)
    base.setupRequest = (/** @type {Record<string, unknown>} */ req) => ({
      ...req,
      body: assertionBodies.next(),
    });
  if (proofs !== undefined) {
    base.setupRequest = (/** @type {Record<string, any>} */ req) => ({
      ...req,
      headers: { ...req.headers, dpop: proofs.next() },
    });
  } else if (spec.rebuildEachRequest) {
    base.setupRequest = (/** @type {Record<string, any>} */ req) => ({
      ...req,
      headers: { ...req.headers },
    });
  }
  if (spec.plant) {
    const { name, tag } = spec.plant;
    const suffix = `,"name":${JSON.stringify(name)},"tag":${JSON.stringify(tag)}}`;
    base.setupRequest = (/** @type {Record<string, unknown>} */ req) => {
      nextId += 1;
      return { ...req, body: `{"id":${nextId}${suffix}` };
    };
  }
  const { rotate } = spec;
  if (rotate && rotate.length > 0) {
    base.setupRequest = (/** @type {Record<string, any>} */ req) => {
      const next = /** @type {{path?: string, body?: string, headers?: Record<string, string>}} */ (
        rotate[turn++ % rotate.length]
      );
      return {
        ...req,
        ...(next.path ? { path: next.path } : {}),
        ...(next.body ? { body: next.body } : {}),
        headers: { ...req.headers, ...next.headers },
      };
    };
  }
  return base;
}

/**
 * @param {number} durationSec
 * @param {number[] | undefined} latencies
 */
function run(durationSec, latencies) {
  proofs?.fill(Math.ceil(durationSec * PROOFS_PER_SECOND));
  /** @type {Record<string, number>} */
  const statuses = {};
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: durationSec,
        requests: [/** @type {autocannon.Request} */ (request())],
        timeout: 10,
      },
      (err, result) => (err ? reject(err) : resolve({ result, statuses })),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      latencies?.push(responseTime);
    });
  });
}

if (spec.warmupSec > 0) await run(spec.warmupSec, undefined);
process.stdout.write(`${JSON.stringify({ event: 'measuring' })}\n`);
/** @type {number[]} */
const latencies = [];
const started = process.hrtime.bigint();
const cpuAtStart = process.cpuUsage();
const { result, statuses } = /** @type {{result: any, statuses: Record<string, number>}} */ (
  await run(spec.durationSec, latencies)
);
const elapsedSec = Number(process.hrtime.bigint() - started) / 1e9;
const cpuUsed = process.cpuUsage(cpuAtStart);
const responses = latencies.length;
const ok = Object.entries(statuses).reduce(
  (n, [code, count]) => (code.startsWith('2') ? n + count : n),
  0,
);
process.stdout.write(
  `${JSON.stringify({
    event: 'result',
    requests: responses,
    ok,
    durationSec: result.duration,
    elapsedSec,
    // Its own CPU in the window: on a shared host what the load generator spends is not the servers'.
    loadCpuSec: (cpuUsed.user + cpuUsed.system) / 1e6,
    errors: result.errors + result.timeouts + (responses - ok),
    connectionErrors: result.errors,
    timeouts: result.timeouts,
    statuses,
    // Raw, to 1 µs: the orchestrator merges windows (ours and the baseline alternate) before taking percentiles.
    latencies: latencies.map((ms) => Math.round(ms * 1000) / 1000),
  })}\n`,
);
