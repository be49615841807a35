// Processes under measurement: spawn a server, wait for its `listening` line, read its CPU
// time and RSS from /proc, stop it. Server output goes to a log file (as a container runtime
// would take it), never through a pipe into this process, so reading it costs us no CPU.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux everywhere that matters). */
const CLOCK_TICKS = 100;
const PAGE_SIZE = 4096;

/**
 * @typedef {object} ServerProcess
 * @property {string} name
 * @property {number} pid
 * @property {number} port
 * @property {number | undefined} internalPort
 * @property {string} url
 * @property {string | undefined} internalUrl
 * @property {string} logFile
 * @property {import('node:child_process').ChildProcess} child
 * @property {(signal?: NodeJS.Signals) => Promise<number | null>} stop
 */

/**
 * Starts `node <script>` with `env` and resolves once it logs `{"msg":"listening","port":N}`,
 * or, given `ports` (it then runs on those, e.g. when its log level hides that line), once
 * `GET /healthz` answers 200.
 * @param {{name: string, script: string, env: Record<string, string>, logDir: string, nodeArgs?: string[], timeoutMs?: number, ports?: {port: number, internalPort?: number}}} options
 * @returns {Promise<ServerProcess>}
 */
export async function startServer({ name, script, env, logDir, nodeArgs = [], timeoutMs = 30_000, ports }) {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${name}.log`);
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...nodeArgs, script], { env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const deadline = Date.now() + timeoutMs;
  let offset = 0;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    if (ports && (await healthy(ports.port))) {
      return serverProcess(name, child, exited, logFile, ports.port, ports.internalPort);
    }
    if (ports) {
      await sleep(100);
      continue;
    }
    const text = readFileSync(logFile, 'utf8');
    const lines = text.slice(offset).split('\n');
    for (const line of lines.slice(0, -1)) {
      if (!line.startsWith('{')) continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (entry.msg === 'listening' && typeof entry.port === 'number') {
        return serverProcess(name, child, exited, logFile, entry.port, entry.internalPort);
      }
    }
    offset += text.slice(offset).lastIndexOf('\n') + 1;
    await sleep(50);
  }
  child.kill('SIGKILL');
  const tail = readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
  throw new Error(`${name} did not report listening (exit ${child.exitCode ?? child.signalCode ?? 'none'}); last output:\n${tail}`);
}

/** @param {number} port */
async function healthy(port) {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
  } catch {
    return false;
  }
}

/**
 * @param {string} name
 * @param {import('node:child_process').ChildProcess} child
 * @param {Promise<unknown>} exited
 * @param {string} logFile
 * @param {number} port
 * @param {number | undefined} internalPort
 * @returns {ServerProcess}
 */
function serverProcess(name, child, exited, logFile, port, internalPort) {
  return {
    name,
    pid: /** @type {number} */ (child.pid),
    port,
    internalPort,
    url: `http://127.0.0.1:${port}`,
    internalUrl: typeof internalPort === 'number' ? `http://127.0.0.1:${internalPort}` : undefined,
    logFile,
    child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = /** @type {number | null} */ (await exited);
      clearTimeout(timer);
      return code;
    },
  };
}

/** A port free right now on 127.0.0.1 (for a process that cannot report its ephemeral one). */
export async function freePort() {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = /** @type {import('node:net').AddressInfo} */ (probe.address());
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * The environment of a load generator: its spec (which holds bench accounts' secrets) goes in
 * BENCH_LOAD_SPEC, readable only by the same user, rather than on its command line, which `ps`
 * shows to everyone.
 * @param {unknown} spec
 */
export function loadSpecEnv(spec) {
  return { ...process.env, BENCH_LOAD_SPEC: JSON.stringify(spec) };
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
 * Resident set size in MB.
 * @param {number} pid
 */
export function rssMb(pid) {
  const statm = readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
  return (Number(statm[1]) * PAGE_SIZE) / (1024 * 1024);
}

/**
 * Runs a node script to completion (migrations, CLI) and returns its stdout.
 * @param {string} script
 * @param {string[]} args
 * @param {Record<string, string>} env
 */
export function runNode(script, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.once('exit', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${script} ${args[0] ?? ''} exited ${code}:\n${err || out}`));
    });
  });
}
