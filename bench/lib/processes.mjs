// Processes under measurement: servers started with test-kit's `spawnServer` (output into a
// log file, as a container runtime would take it, never through a pipe into this process, so
// reading it costs us no CPU), their CPU time and RSS from /proc, and the load generators
// that drive them.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux everywhere that matters). */
const CLOCK_TICKS = 100;
const PAGE_SIZE = 4096;

/** @typedef {import('@plant/test-kit').ServerProcess} ServerProcess */

/**
 * `startServer({name, script, env, logDir, nodeArgs})`: starts `node <script>` and resolves
 * once it logs `{"msg":"listening","port":N}`.
 */
export { spawnServer as startServer } from '@plant/test-kit';

/** Above this a spec goes in a file: the environment of a process is limited (E2BIG). */
const MAX_SPEC_IN_ENV = 64 * 1024;

/**
 * The environment of a load generator: its spec (which holds bench accounts' secrets) goes in
 * BENCH_LOAD_SPEC, readable only by the same user, rather than on its command line, which `ps`
 * shows to everyone; a large one (thousands of realms' requests) in a file of mode 0600 named by
 * BENCH_LOAD_SPEC_FILE, removed by `cleanup`.
 * @param {unknown} spec
 */
function loadSpecEnv(spec) {
  const text = JSON.stringify(spec);
  if (text.length <= MAX_SPEC_IN_ENV)
    return { env: { ...process.env, BENCH_LOAD_SPEC: text }, cleanup: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), 'bench-spec-'));
  const file = join(dir, 'spec.json');
  writeFileSync(file, text, { mode: 0o600 });
  return {
    env: { ...process.env, BENCH_LOAD_SPEC_FILE: file },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Runs a load generator (`node <script>`, its spec in the environment) and hands every JSON
 * line it prints to `onMessage`; resolves once it has exited and all its output is read.
 * @param {string} script
 * @param {unknown} spec
 * @param {(message: any) => void} onMessage
 * @param {Placement} [placement]
 * @returns {Promise<{code: number | null, stderr: string}>}
 */
export function runLoadGenerator(script, spec, onMessage, placement) {
  return startLoadGenerator(script, spec, onMessage, placement).done;
}

/**
 * Where a load generator runs, from its first instruction: `cpus` the cores it may use
 * (`taskset -c`), `niceness` its nice value (`nice -n`; a second load beside the measured one
 * runs at 19, so it takes only what the measured load's generator leaves on their cores). Both
 * exec node, so the child's pid is node's.
 * @typedef {{cpus?: string, niceness?: number}} Placement
 */

/**
 * `runLoadGenerator` for a generator that runs until told to stop: `stop()` sends it SIGTERM;
 * `done` resolves once it has exited and all its output is read.
 * @param {string} script
 * @param {unknown} spec
 * @param {(message: any) => void} onMessage
 * @param {Placement} [placement]
 * @returns {{stop(): void, done: Promise<{code: number | null, stderr: string}>, pid: number | undefined}}
 */
export function startLoadGenerator(script, spec, onMessage, { cpus, niceness } = {}) {
  const { env, cleanup } = loadSpecEnv(spec);
  const argv = [
    ...(niceness === undefined ? [] : ['nice', '-n', String(niceness)]),
    ...(cpus === undefined ? [] : ['taskset', '-c', cpus]),
    process.execPath,
    script,
  ];
  const child = spawn(/** @type {string} */ (argv[0]), argv.slice(1), {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    onMessage(message);
  });
  const done = new Promise((resolve) =>
    child.once('close', (code) => {
      cleanup();
      resolve({ code, stderr });
    }),
  );
  return {
    stop: () => child.kill('SIGTERM'),
    done: /** @type {Promise<{code: number | null, stderr: string}>} */ (done),
    pid: child.pid,
  };
}

/**
 * This host's cores split between the load generators and the servers under measurement, so
 * that what a generator burns (a second load beside the measured one, say) is not taken from
 * the servers: `generators` core 0 (0-1 from eight cores), `servers` the rest. Undefined on one
 * core or without `taskset` (util-linux): then nothing is pinned and the figures say so.
 * @returns {{generators: string, servers: string, all: string} | undefined}
 */
export function coreSplit() {
  const cores = availableParallelism();
  if (cores < 2 || process.platform !== 'linux') return undefined;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const generators = cores >= 8 ? '0-1' : '0';
  const first = cores >= 8 ? 2 : 1;
  const servers = first === cores - 1 ? String(first) : `${first}-${cores - 1}`;
  return { generators, servers, all: `0-${cores - 1}` };
}

/**
 * Pins every thread of a running process to `cpus` (`taskset -a -p -c`); threads it starts
 * later inherit the affinity of the thread that starts them.
 * @param {number} pid
 * @param {string} cpus
 */
export function pinProcess(pid, cpus) {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * CPU seconds so far of each thread of `pid` whose nice value is `nice`, by thread id: the
 * token service's password checkers are the threads at nice 19 (password-checkers.ts).
 * @param {number} pid
 * @param {number} nice
 * @returns {Map<number, number>}
 */
export function threadCpuSecondsAtNice(pid, nice) {
  /** @type {Map<number, number>} */
  const threads = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Field 19 of stat is nice; fields here start at field 3 (state).
      if (Number(fields[16]) !== nice) continue;
      threads.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS);
    } catch {
      // the thread ended meanwhile
    }
  }
  return threads;
}

/**
 * CPU seconds (user + system) the process has used so far.
 * @param {number} pid
 */
export function cpuSeconds(pid) {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/**
 * CPU seconds of a process's main thread alone (its JavaScript), without the libuv thread
 * pool where RS256 signing, hashing and file writes run.
 * @param {number} pid
 */
export function mainThreadCpuSeconds(pid) {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

/** @param {string} file */
function statCpuSeconds(file) {
  const stat = readFileSync(file, 'utf8');
  // Fields after the command name (which may contain spaces) start at state (field 3).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / CLOCK_TICKS;
}

/**
 * Seconds every core has sat idle so far (idle + iowait, /proc/stat's first line): a window's
 * idle time tells a load that left cores waiting (a round trip, a serial stage) from one that
 * kept them busy.
 */
export function hostIdleSeconds() {
  const [, , , idle, iowait] = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (idle + iowait) / CLOCK_TICKS;
}

/**
 * Resident set size in MB.
 * @param {number} pid
 */
export function rssMb(pid) {
  const statm = readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
  return (Number(statm[1]) * PAGE_SIZE) / (1024 * 1024);
}
