// Processes under measurement: servers started with test-kit's `spawnServer` (output into a
// log file, as a container runtime would take it, never through a pipe into this process, so
// reading it costs us no CPU), their CPU time and RSS from /proc, and the load generators
// that drive them.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux everywhere that matters). */
const CLOCK_TICKS = 100;
const PAGE_SIZE = 4096;

/** @typedef {import('../../packages/test-kit/dist/index.js').ServerProcess} ServerProcess */

/**
 * `startServer({name, script, env, logDir, nodeArgs})`: starts `node <script>` and resolves
 * once it logs `{"msg":"listening","port":N}`.
 */
export { spawnServer as startServer } from '../../packages/test-kit/dist/index.js';

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
 * @returns {Promise<{code: number | null, stderr: string}>}
 */
export function runLoadGenerator(script, spec, onMessage) {
  return startLoadGenerator(script, spec, onMessage).done;
}

/**
 * `runLoadGenerator` for a generator that runs until told to stop: `stop()` sends it SIGTERM;
 * `done` resolves once it has exited and all its output is read.
 * @param {string} script
 * @param {unknown} spec
 * @param {(message: any) => void} onMessage
 * @returns {{stop(): void, done: Promise<{code: number | null, stderr: string}>}}
 */
export function startLoadGenerator(script, spec, onMessage) {
  const { env, cleanup } = loadSpecEnv(spec);
  const child = spawn(process.execPath, [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  };
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
