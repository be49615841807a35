// Heap measurements for the soak: the V8 heap a service reports on /metrics, and its live
// heap. `--heapsnapshot-signal=SIGUSR2` makes a service write a V8 heap snapshot on that
// signal, after a full garbage collection, so the snapshot holds live objects only. Their
// summed size at the start and the end of the measured window tells a leak (live heap grows)
// from V8 and malloc sizing their reservations (RSS grows, live heap does not).
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** @param {string} dir */
export const snapshotNodeArgs = (dir) => [
  '--heapsnapshot-signal=SIGUSR2',
  `--diagnostic-dir=${dir}`,
];

/**
 * Signals the process, waits for its snapshot to be written (the process answers again once
 * it is), and returns the live heap in MB. The snapshot file is deleted after reading.
 * @param {{pid: number, managementUrl: string}} proc
 * @param {string} dir
 * @returns {Promise<number | null>}
 */
export async function liveHeapMb(proc, dir) {
  const before = new Set(readdirSync(dir));
  process.kill(proc.pid, 'SIGUSR2');
  const deadline = Date.now() + 60_000;
  let file;
  while (Date.now() < deadline) {
    file = readdirSync(dir).find(
      (f) => !before.has(f) && f.includes(`.${proc.pid}.`) && f.endsWith('.heapsnapshot'),
    );
    if (file !== undefined) {
      // The snapshot is written on the process's main thread: once it answers, the file is complete.
      const answered = await fetch(`${proc.managementUrl}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (answered) break;
    }
    await sleep(100);
  }
  if (file === undefined) return null;
  const path = join(dir, file);
  try {
    return Number((liveBytes(JSON.parse(readFileSync(path, 'utf8'))) / 2 ** 20).toFixed(1));
  } finally {
    rmSync(path, { force: true });
  }
}

/**
 * Sum of every node's self size: the heap the snapshot's full GC left alive.
 * @param {{snapshot: {meta: {node_fields: string[]}}, nodes: number[]}} snapshot
 */
function liveBytes(snapshot) {
  const fields = snapshot.snapshot.meta.node_fields;
  const width = fields.length;
  const selfSize = fields.indexOf('self_size');
  let total = 0;
  for (let i = selfSize; i < snapshot.nodes.length; i += width)
    total += /** @type {number} */ (snapshot.nodes[i]);
  return total;
}

/**
 * The V8 heap in use and committed, its young (new space) and old generations' committed
 * sizes, and memory outside the V8 heap (buffers), from a service's /metrics (prom-client's
 * default metrics), in MB.
 * @param {string} url a service's management base URL (probes and metrics)
 * @returns {Promise<{used: number | null, total: number | null, external: number | null, newSpace: number | null, oldSpace: number | null}>}
 */
export async function heapMb(url) {
  const read = (/** @type {string} */ text, /** @type {string} */ name, label = '') => {
    const match = new RegExp(`^${name}(?:\\{${label}[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
    return match ? Number((Number(match[1]) / 2 ** 20).toFixed(1)) : null;
  };
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    return {
      used: read(text, 'nodejs_heap_size_used_bytes'),
      total: read(text, 'nodejs_heap_size_total_bytes'),
      external: read(text, 'nodejs_external_memory_bytes'),
      newSpace: read(text, 'nodejs_heap_space_size_total_bytes', 'space="new"'),
      oldSpace: read(text, 'nodejs_heap_space_size_total_bytes', 'space="old"'),
    };
  } catch {
    return { used: null, total: null, external: null, newSpace: null, oldSpace: null };
  }
}
