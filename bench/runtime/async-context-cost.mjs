#!/usr/bin/env node
// What an enabled AsyncLocalStorage costs work that never enters it, on the Node that runs this
// and on others given (`node bench/runtime/async-context-cost.mjs [--rounds=N] [<node binary>…]`).
// The token service keeps no request context for its grants; on Node 20 an enabled storage made
// every promise of the process dearer (async_hooks' promise hook copies every storage into every
// promise), so it turned the storage off between traced requests. On Node 24 AsyncLocalStorage
// runs on AsyncContextFrame (V8's continuation-preserved embedder data: one pointer per
// continuation, no hook), which this measures: CPU per await-heavy "request" with the storage
// never entered, entered by another request and still enabled, and entered then disabled.
// Each mode runs in a fresh process (enabling cannot be undone), in alternating rounds.
import { execFileSync } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const MODES = ['never', 'enabled', 'disabled'];

/** One child: `iterations` "requests" of 40 awaits through 4 async frames each; CPU ns per request. */
async function child(/** @type {string} */ mode, /** @type {number} */ iterations) {
  const storage = new AsyncLocalStorage();
  if (mode !== 'never') {
    // Another request (a traced one) entered the storage; this work runs outside it.
    await storage.run({ id: 'traced' }, async () => {
      await Promise.resolve();
    });
    if (mode === 'disabled') storage.disable();
  }
  const step = async (/** @type {number} */ n) => {
    let sum = 0;
    for (let i = 0; i < 10; i += 1) sum += await Promise.resolve(n + i);
    return sum;
  };
  const request = async () => {
    let total = 0;
    for (let f = 0; f < 4; f += 1) total += await step(f);
    return total;
  };
  for (let i = 0; i < iterations / 10; i += 1) await request(); // warm-up
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i += 1) await request();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / iterations;
}

const self = fileURLToPath(import.meta.url);
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    child: { type: 'string' },
    iterations: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '5' },
  },
});
if (values.child !== undefined) {
  process.stdout.write(`${await child(values.child, Number(values.iterations))}\n`);
} else {
  const nodes = [process.execPath, ...positionals];
  /** @type {Record<string, Record<string, number[]>>} */
  const results = {};
  for (let round = 0; round < Number(values.rounds); round += 1) {
    // Alternate the order each round, so drift on a shared host falls on every side alike.
    const order = round % 2 === 0 ? nodes : [...nodes].reverse();
    for (const node of order) {
      for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
        const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
        const ns = Number(
          execFileSync(node, [self, `--child=${mode}`, `--iterations=${values.iterations}`], {
            encoding: 'utf8',
          }),
        );
        results[version] ??= {};
        const byMode = results[version];
        byMode[mode] ??= [];
        byMode[mode].push(ns);
      }
    }
  }
  const median = (/** @type {number[]} */ xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)] ?? Number.NaN;
  };
  for (const [version, modes] of Object.entries(results)) {
    const never = median(modes.never ?? []);
    const line = MODES.map((m) => {
      const ns = median(modes[m] ?? []);
      return `${m} ${(ns / 1000).toFixed(2)} µs (${(ns / never).toFixed(3)}×)`;
    }).join(', ');
    process.stdout.write(`${version}: CPU per request of 40 awaits: ${line}\n`);
  }
}
