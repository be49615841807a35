// `pnpm bench -- --perf`: Linux perf samples of each server's main thread during the measured
// windows, and where that thread's CPU goes per request, ours beside the baseline.
//
// Why perf and not `--cpu-prof`: V8's profiler samples wall-clock time, so on a 2-core box
// where the libuv pool (RS256 signing), the load generator and Postgres preempt the main
// thread, a sample lands on whatever frame runs next (native calls look several times
// dearer than they are). perf's cpu-clock event samples a thread only while it is on a CPU.
// JavaScript frames are named through the servers' `--perf-basic-prof` maps.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { table } from './report.mjs';

/** perf's answer to a trial recording, or null when it works here. */
export function perfUnavailable() {
  const trial = spawnSync('perf', ['stat', '-e', 'cpu-clock', 'true'], { encoding: 'utf8' });
  if (trial.error) return 'perf is not installed (Debian: apt-get install linux-perf)';
  if (trial.status !== 0)
    return `perf cannot sample here: ${trial.stderr.trim().split('\n').slice(-1)[0]}`;
  return null;
}

/** Node flags of a server whose JavaScript frames perf must name. */
export const PERF_NODE_ARGS = ['--perf-basic-prof'];

/**
 * A window probe (see measureWindow) that records each measured window's main threads into
 * `dir/<label>-<n>.data`, and remembers which files belong to which label.
 * @param {string} dir
 */
export function perfProbe(dir) {
  /** @type {Map<string, string[]>} */
  const files = new Map();
  return {
    files,
    /**
     * @param {number[]} pids
     * @param {string} label
     */
    start(pids, label) {
      const list = files.get(label) ?? [];
      files.set(label, list);
      const file = join(dir, `${label}-${list.length + 1}.data`);
      list.push(file);
      // -t: the main thread only (its id is the pid); the pool's signing threads are the same work on both sides.
      const child = spawn(
        'perf',
        ['record', '-q', '-e', 'cpu-clock', '-F', '999', '-g', '-t', pids.join(','), '-o', file],
        { stdio: 'ignore' },
      );
      const exited = once(child, 'exit');
      return {
        async stop() {
          child.kill('SIGINT');
          await exited;
        },
      };
    },
  };
}

/**
 * What a sample's innermost frame is: a package's JavaScript, or which part of V8, Node or
 * the kernel.
 * @param {string} frame
 */
function kindOf(frame) {
  if (frame.startsWith('JS:')) {
    const dep = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame);
    if (dep) return `JS ${dep[1]}`;
    const ours = /\/(services|packages)\/([^/]+)\//.exec(frame);
    if (ours) return `JS ${ours[1]}/${ours[2]}`;
    if (/ node:/.test(frame)) return 'JS node core';
    return 'JS other';
  }
  if (frame.startsWith('Builtins_')) {
    if (/IC/.test(frame)) return 'V8 inline-cache misses (IC builtins)';
    if (/Promise|Microtask|Async|Generator|Await/.test(frame))
      return 'V8 promises and async functions';
    return 'V8 other builtins';
  }
  if (/Scaveng|Heap::|GC|Marking|Sweep|Evacuat|MinorMC|Marker/.test(frame))
    return 'garbage collector';
  if (frame.startsWith('v8::')) return 'V8 runtime (C++)';
  if (/^(node::|uv_|uv__|llhttp|ada::|simdutf|nghttp)/.test(frame)) return 'Node native (C++)';
  if (/^(EVP_|HMAC|SHA|sha|RSA|BN_|OPENSSL|CRYPTO_|ossl_)/.test(frame)) return 'OpenSSL';
  if (
    /^(_?_?(libc|GI|pthread|malloc|free|cfree|mem|str|unlink_chunk|_int_|lll_)|malloc|free)/.test(
      frame,
    )
  )
    return 'libc (malloc, locks, memcpy)';
  // What is left has no JavaScript, V8, Node or library name: nearly all of it the kernel's.
  return 'kernel and other native code';
}

/** @param {string} frame */
const shortName = (frame) =>
  frame
    .replace(/^JS:[*^~]?/, '')
    .replace(/file:\/\/\/?[^ ]*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '')
    .replace(/\/?[^ ]*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '')
    .replace(/file:\/\/[^ ]*?\/(services|packages)\//, '$1/');

/**
 * Every recorded sample of the files as its call stack, innermost frame first.
 * @param {string[]} files
 * @returns {string[][]}
 */
function stacksOf(files) {
  /** @type {string[][]} */
  const stacks = [];
  for (const file of files) {
    const text = execFileSync('perf', ['script', '-F', 'ip,sym', '-i', file], {
      maxBuffer: 1 << 30,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    for (const block of text.split('\n\n')) {
      const frames = block
        .split('\n')
        .map((l) => l.trim().replace(/^[0-9a-f]+ /, ''))
        .filter((l) => l.length > 0);
      if (frames.length > 0) stacks.push(frames);
    }
  }
  return stacks;
}

/**
 * Main-thread CPU per request by kind of code, by our functions (inclusive) and by function
 * (self). The samples share out the thread's CPU per request measured from /proc over the
 * same windows, so figures are µs per request.
 * @param {string[]} files
 * @param {number} usPerRequest  the main thread's measured CPU µs per request
 */
export function breakdown(files, usPerRequest) {
  const stacks = stacksOf(files);
  const usPerSample = stacks.length > 0 ? usPerRequest / stacks.length : 0;
  /** @type {Map<string, number>} */
  const kinds = new Map();
  /** @type {Map<string, number>} */
  const self = new Map();
  /** @type {Map<string, number>} */
  const ours = new Map();
  const add = (/** @type {Map<string, number>} */ map, /** @type {string} */ key) =>
    map.set(key, (map.get(key) ?? 0) + usPerSample);
  for (const frames of stacks) {
    const top = /** @type {string} */ (frames[0]);
    add(kinds, kindOf(top));
    add(self, shortName(top));
    for (const frame of new Set(
      frames.filter(
        (f) => f.startsWith('JS:') && /\/(services|packages)\//.test(f) && !/node_modules/.test(f),
      ),
    ))
      add(ours, shortName(frame));
  }
  return { samples: stacks.length, usPerRequest, kinds, self, ours };
}

/**
 * Ours beside the baseline: by kind, our functions, and the functions whose self time differs most.
 * @param {string} scenario
 * @param {ReturnType<typeof breakdown>} ours
 * @param {ReturnType<typeof breakdown>} baseline
 */
export function perfReport(scenario, ours, baseline) {
  const us = (/** @type {number | undefined} */ v) => (v ?? 0).toFixed(1);
  const compare = (
    /** @type {Map<string, number>} */ a,
    /** @type {Map<string, number>} */ b,
    /** @type {number} */ limit,
  ) =>
    [...new Set([...a.keys(), ...b.keys()])]
      .map((k) => /** @type {const} */ ([k, a.get(k) ?? 0, b.get(k) ?? 0]))
      .sort((x, y) => Math.abs(y[1] - y[2]) - Math.abs(x[1] - x[2]))
      .slice(0, limit)
      .map(([k, x, y]) => [k.slice(0, 110), us(x), us(y), `${x - y >= 0 ? '+' : ''}${us(x - y)}`]);
  const head = ['', 'ours µs/req', 'baseline µs/req', 'difference'];
  return [
    `${scenario}: main-thread CPU per request, perf cpu-clock samples (${ours.samples} ours, ${baseline.samples} baseline) scaled to the thread's CPU time`,
    '',
    table(head, [
      [
        'all',
        us(ours.usPerRequest),
        us(baseline.usPerRequest),
        `${ours.usPerRequest - baseline.usPerRequest >= 0 ? '+' : ''}${us(ours.usPerRequest - baseline.usPerRequest)}`,
      ],
      ...compare(ours.kinds, baseline.kinds, 30),
    ]),
    '',
    'our functions (services/, packages/), inclusive of what they call synchronously:',
    '',
    table(
      ['function', 'µs/req'],
      [...ours.ours]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 15)
        .map(([k, v]) => [k.slice(0, 110), us(v)]),
    ),
    '',
    'functions whose own time differs most:',
    '',
    table(['function', ...head.slice(1)], compare(ours.self, baseline.self, 25)),
  ].join('\n');
}
