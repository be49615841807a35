// Runs one load window from the separate load-generator process and measures the servers
// around the measured part only (after warm-up): CPU seconds from /proc, per request.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from './processes.mjs';

const CLIENT = fileURLToPath(new URL('../load/autocannon-client.mjs', import.meta.url));

/**
 * @typedef {object} LoadResult
 * @property {number} requests
 * @property {number} ok
 * @property {number} rps
 * @property {number | null} p50Ms
 * @property {number | null} p99Ms
 * @property {number | null} maxMs
 * @property {number} errors
 * @property {Record<string, number>} statuses
 * @property {number} cpuSec            server CPU seconds during the measured window
 * @property {number | null} cpuUsPerReq server CPU microseconds per request
 */

/**
 * @param {import('../load/autocannon-client.mjs').LoadSpec | Record<string, unknown>} spec
 * @param {number[]} serverPids the processes whose CPU time this load costs
 * @returns {Promise<LoadResult>}
 */
export function measureLoad(spec, serverPids) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    /** @type {number[] | undefined} */
    let before;
    /** @type {any} */
    let result;
    createInterface({ input: child.stdout }).on('line', (line) => {
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        return;
      }
      if (message.event === 'measuring') before = serverPids.map(cpuSeconds);
      if (message.event === 'result') {
        const after = serverPids.map(cpuSeconds);
        const cpuSec = after.reduce((sum, t, i) => sum + t - (before?.[i] ?? t), 0);
        const { event: _event, ...rest } = message;
        result = { ...rest, cpuSec, cpuUsPerReq: rest.requests > 0 ? (cpuSec / rest.requests) * 1e6 : null };
      }
    });
    child.once('exit', (code) => {
      if (result) resolve(result);
      else reject(new Error(`load generator exited ${code} without a result:\n${stderr}`));
    });
  });
}
