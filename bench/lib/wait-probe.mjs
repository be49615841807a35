// `pnpm bench -- --waits`: loaded into every server (`node --import`), it writes one JSON line a
// second (while requests arrive) to `<dir>/waits-<node version>-<pid>.jsonl`: the event loop's
// utilisation (near 1: the main thread is the bottleneck; well below with requests in flight:
// they wait on something), requests served and their mean time in the server (request start to
// response finish, from the http diagnostics channels), and node:crypto's signatures and checks
// on the thread pool: how many, their mean time from the call to the callback (hand-off, queue
// and work) and the most in flight at once (the pool's queue plus its threads), and the checks
// made in place. It wraps node:crypto's `sign` and `verify` (syncBuiltinESMExports, so the
// services' named imports see the wrappers): a few µs per call, on both runtimes alike.
import crypto from 'node:crypto';
import dc from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/** @param {string} dir where the lines go */
export function startWaitProbe(dir) {
  const out = join(dir, `waits-${process.version}-${process.pid}.jsonl`);
  const zero = () => ({
    req: 0,
    reqMs: 0,
    poolSign: 0,
    poolSignMs: 0,
    poolVerify: 0,
    poolVerifyMs: 0,
    inPlaceVerify: 0,
    inPlaceVerifyMs: 0,
    poolInFlightMax: 0,
  });
  let stats = zero();
  let poolInFlight = 0;
  for (const [name, key] of /** @type {const} */ ([
    ['sign', 'poolSign'],
    ['verify', 'poolVerify'],
  ])) {
    const original = /** @type {(...args: any[]) => any} */ (crypto[name]);
    crypto[name] = /** @type {any} */ (
      function (/** @type {any[]} */ ...args) {
        const callback = args.at(-1);
        const started = performance.now();
        if (typeof callback !== 'function') {
          const result = original.apply(this, args);
          if (name === 'verify') {
            stats.inPlaceVerify += 1;
            stats.inPlaceVerifyMs += performance.now() - started;
          }
          return result;
        }
        poolInFlight += 1;
        stats.poolInFlightMax = Math.max(stats.poolInFlightMax, poolInFlight);
        args[args.length - 1] = function (/** @type {any[]} */ ...results) {
          poolInFlight -= 1;
          stats[key] += 1;
          stats[`${key}Ms`] += performance.now() - started;
          return callback.apply(this, results);
        };
        return original.apply(this, args);
      }
    );
  }
  syncBuiltinESMExports();
  /** @type {WeakMap<object, number>} */
  const starts = new WeakMap();
  dc.subscribe('http.server.request.start', (message) => {
    starts.set(/** @type {any} */ (message).request, performance.now());
  });
  dc.subscribe('http.server.response.finish', (message) => {
    const started = starts.get(/** @type {any} */ (message).request);
    if (started === undefined) return;
    stats.req += 1;
    stats.reqMs += performance.now() - started;
  });
  let elu = performance.eventLoopUtilization();
  const mean = (/** @type {number} */ total, /** @type {number} */ n) =>
    n === 0 ? null : +(total / n).toFixed(3);
  setInterval(() => {
    const since = performance.eventLoopUtilization(elu);
    elu = performance.eventLoopUtilization();
    // Health probes only: nothing to say.
    if (stats.req > 5) {
      const s = stats;
      appendFileSync(
        out,
        `${JSON.stringify({
          t: Date.now(),
          elu: +since.utilization.toFixed(3),
          req: s.req,
          reqMs: mean(s.reqMs, s.req),
          poolSign: s.poolSign,
          poolSignMs: mean(s.poolSignMs, s.poolSign),
          poolVerify: s.poolVerify,
          poolVerifyMs: mean(s.poolVerifyMs, s.poolVerify),
          poolInFlightMax: s.poolInFlightMax,
          inPlaceVerify: s.inPlaceVerify,
          inPlaceVerifyMs: mean(s.inPlaceVerifyMs, s.inPlaceVerify),
        })}\n`,
      );
    }
    stats = zero();
  }, 1000).unref();
}
