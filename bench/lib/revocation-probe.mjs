// How fast a revocation reaches resource servers, measured from outside as a client sees it:
// the one probe of `pnpm bench:revocation` and `pnpm bench:scale`. After a change's API answer
// has arrived, each store is polled back to back with the old token until it refuses it.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const POLL_TIMEOUT_MS = 10_000;
const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/**
 * One HTTP call on a kept-alive connection; resolves with the status and body when the
 * response has fully arrived (and the time it did).
 * @param {string} url
 * @param {{ method?: string, headers?: Record<string, string>, body?: string }} [options]
 * @returns {Promise<{status: number, body: string, at: number}>}
 */
export function call(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: text, at: performance.now() }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Polls one store with the old token until it refuses it: the latency from `since` (an upper
 * bound: it includes one poll's round trip) and how many 200s came first.
 * @param {{ url: string, name: string }} store
 * @param {string} token
 * @param {number} since  `performance.now()` when the change's API answer arrived
 * @returns {Promise<{ latencyMs: number, stale: number }>}
 */
export async function firstRefusal(store, token, since) {
  let stale = 0;
  for (;;) {
    const res = await call(`${store.url}/plants?limit=1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (res.status === 401) return { latencyMs: res.at - since, stale };
    if (res.status !== 200) throw new Error(`${store.name} answered ${res.status}: ${res.body}`);
    stale += 1;
    if (res.at - since > POLL_TIMEOUT_MS)
      throw new Error(`${store.name} still accepts a revoked token after ${POLL_TIMEOUT_MS} ms`);
  }
}

/** @param {number[]} sorted @param {number} p */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return /** @type {number} */ (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
  );
}

/** @param {number[]} values */
export function latencySummary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted[sorted.length - 1] ?? NaN,
  };
}

/** Closes the probe's kept-alive connections. */
export function closeProbe() {
  agent.destroy();
}
