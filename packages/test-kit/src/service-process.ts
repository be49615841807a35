import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './env.js';
import { eventually, sleep } from './waiting.js';

export type ServiceName = 'plant-store' | 'token-service' | 'account-admin';

/** A server started as its own process (a service, or a benchmark's baseline server). */
export interface ServerProcess {
  /** What logs, reports and its log file call it (`plant-store-2`). */
  name: string;
  child: ChildProcess;
  pid: number;
  /** When it was spawned (ms since the epoch): a restarted replica's readiness counts from here. */
  spawnedAt: number;
  /** Public port and base URL (http://127.0.0.1:port). */
  port: number;
  url: string;
  /** The token service's internal listener, when the server has one. */
  internalPort?: number;
  internalUrl?: string;
  /** The management listener (/healthz, /readyz, /metrics), when the server has one (every service does). */
  managementPort?: number;
  managementUrl?: string;
  /**
   * Every line the process wrote to stdout and stderr so far (with `logDir`: up to `listening`).
   * Services buffer their log output (up to 100 ms): read `flushedLogs()` to see everything
   * logged before a point.
   */
  logs: string[];
  /**
   * Every line logged before this call: sends a request with a fresh request id and waits for
   * its access line; lines leave the process in order, so all earlier ones are in by then.
   */
  flushedLogs(): Promise<string[]>;
  /** SIGTERM (or the given signal), then wait for exit; SIGKILL if it is still running after 15 s. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ServiceProcess extends ServerProcess {
  service: ServiceName;
  managementPort: number;
  managementUrl: string;
}

export interface SpawnServiceOptions {
  env: Record<string, string>;
  /** How long to wait until it listens. */
  timeoutMs?: number;
  /** Node options before the script (a profiler, heap snapshots on a signal). */
  nodeArgs?: string[];
  /**
   * Output into `<logDir>/<name>.log` instead of a pipe, as a container runtime takes it:
   * reading it then costs this process nothing while the server is measured (benchmarks).
   */
  logDir?: string;
  /** Default: the service's name. */
  name?: string;
  /**
   * The checkout whose built service runs (default REPO_ROOT): a rolling upgrade starts the
   * previous release's build, then the current one's.
   */
  root?: string;
  /**
   * The node binary (default `process.execPath`: the suite's own, the pinned one). Only a
   * benchmark comparing runtimes gives another (`pnpm bench -- --runtime-baseline=<node>`).
   */
  node?: string;
}

export interface SpawnServerOptions extends SpawnServiceOptions {
  name: string;
  script: string;
}

/** Levels at which a service does not write its `listening` line. */
const QUIET_LEVELS = new Set(['warn', 'error', 'fatal', 'silent']);
const KILL_AFTER_MS = 15_000;

type Address = { port: number; internalPort?: number; managementPort?: number };

/** Where the process's lines go: a pipe read as they come, or a file read when asked (`pull`). */
function captureOutput(
  child: ChildProcess,
  logs: string[],
  logFile: string | undefined,
): () => void {
  if (logFile !== undefined) {
    let offset = 0;
    return () => {
      const text = readFileSync(logFile, 'utf8');
      const end = text.lastIndexOf('\n') + 1;
      if (end > offset) logs.push(...text.slice(offset, end - 1).split('\n'));
      offset = Math.max(offset, end);
    };
  }
  let buffered = '';
  const reader = (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      logs.push(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  };
  child.stdout!.on('data', reader);
  child.stderr!.on('data', reader);
  return () => undefined;
}

function listeningLine(line: string): Address | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as {
      msg?: string;
      port?: number;
      internalPort?: number;
      managementPort?: number;
    };
    if (entry.msg !== 'listening' || typeof entry.port !== 'number') return undefined;
    return {
      port: entry.port,
      ...(typeof entry.internalPort === 'number' ? { internalPort: entry.internalPort } : {}),
      ...(typeof entry.managementPort === 'number' ? { managementPort: entry.managementPort } : {}),
    };
  } catch {
    return undefined;
  }
}

/** A quiet server was told its ports: it is up once `/healthz` answers 200 on its management port (or, without one, its PORT). */
async function healthyAt(env: Record<string, string>): Promise<Address | undefined> {
  const port = Number(env.PORT);
  const ok = await fetch(`http://127.0.0.1:${probePort(env)}/healthz`).then(
    (res) => res.status === 200,
    () => false,
  );
  if (!ok) return undefined;
  return {
    port,
    ...(env.INTERNAL_PORT === undefined ? {} : { internalPort: Number(env.INTERNAL_PORT) }),
    ...(env.MANAGEMENT_PORT === undefined ? {} : { managementPort: Number(env.MANAGEMENT_PORT) }),
  };
}

const probePort = (env: Record<string, string>): number => Number(env.MANAGEMENT_PORT ?? env.PORT);

/** Where the child's output goes: a file under `logDir` (for a test to read after), or pipes. */
function openOutput(
  name: string,
  logDir: string | undefined,
): { logFile: string | undefined; output: 'pipe' | number } {
  if (logDir === undefined) return { logFile: undefined, output: 'pipe' };
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${name}.log`);
  return { logFile, output: openSync(logFile, 'w') };
}

/**
 * Reads the child's output (and, when it is quiet, its `/healthz`) until it says where it
 * listens; undefined once it has exited or `timeoutMs` has passed.
 */
async function awaitAddress({
  env,
  quiet,
  pull,
  logs,
  running,
  timeoutMs,
}: {
  env: Record<string, string>;
  quiet: boolean;
  pull: () => void;
  logs: readonly string[];
  running: () => boolean;
  timeoutMs: number;
}): Promise<Address | undefined> {
  const deadline = Date.now() + timeoutMs;
  let scanned = 0;
  let address: Address | undefined;
  while (address === undefined && running() && Date.now() < deadline) {
    pull();
    if (quiet) address = await healthyAt(env);
    for (; address === undefined && scanned < logs.length; scanned += 1)
      address = listeningLine(logs[scanned]!);
    if (address === undefined) await sleep(quiet ? 100 : 20);
  }
  return address;
}

/**
 * Starts `node <script>` as its own process and resolves once it logs
 * `{"msg":"listening","port":N}` or, when its LOG_LEVEL hides that line (it must then be given
 * its PORT and MANAGEMENT_PORT, if it has one), once `GET /healthz` answers 200 there.
 */
export async function spawnServer({
  name,
  script,
  env: given,
  timeoutMs = 20_000,
  nodeArgs = [],
  logDir,
  node = process.execPath,
}: SpawnServerOptions): Promise<ServerProcess> {
  const env: Record<string, string> & { LOG_LEVEL: string; PORT: string } = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...given,
  };
  const quiet = QUIET_LEVELS.has(env.LOG_LEVEL);
  if (quiet && (Number(env.PORT) === 0 || probePort(env) === 0)) {
    throw new Error(
      `${name}: at LOG_LEVEL=${env.LOG_LEVEL} it never says where it listens; give it a PORT${env.MANAGEMENT_PORT === undefined ? '' : ' and a MANAGEMENT_PORT'}`,
    );
  }
  const { logFile, output } = openOutput(name, logDir);
  const spawnedAt = Date.now();
  const child = spawn(node, [...nodeArgs, script], {
    env,
    stdio: ['ignore', output, output],
  });
  if (typeof output === 'number') closeSync(output);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  // After 'exit' the pipes may still hold the last lines: 'close' comes once they are read.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const logs: string[] = [];
  const pull = captureOutput(child, logs, logFile);
  const running = () => child.exitCode === null && child.signalCode === null;

  const address = await awaitAddress({ env, quiet, pull, logs, running, timeoutMs });
  if (address === undefined) {
    const outcome = running()
      ? `did not report listening within ${timeoutMs} ms`
      : `exited with ${child.exitCode ?? child.signalCode} before listening`;
    child.kill('SIGKILL');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, 1000)))]);
    clearTimeout(timer);
    pull();
    throw new Error(`${name} ${outcome}:\n${logs.join('\n')}`);
  }

  const { port, internalPort, managementPort } = address;
  return {
    name,
    child,
    pid: child.pid!,
    spawnedAt,
    port,
    url: `http://127.0.0.1:${port}`,
    ...(internalPort === undefined
      ? {}
      : { internalPort, internalUrl: `http://127.0.0.1:${internalPort}` }),
    ...(managementPort === undefined
      ? {}
      : { managementPort, managementUrl: `http://127.0.0.1:${managementPort}` }),
    logs,
    async flushedLogs() {
      const marker = `log-flush-${randomUUID()}`;
      await fetch(`http://127.0.0.1:${port}/log-flush-marker`, {
        headers: { 'x-request-id': marker },
      }).then((r) => r.arrayBuffer());
      await eventually(
        () => {
          pull();
          return logs.some((line) => line.includes(marker));
        },
        `${name} to log request ${marker}`,
        5_000,
      );
      return logs;
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (running()) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * The NODE_OPTIONS a service's image sets (`ENV NODE_OPTIONS="..."` in its target of the root
 * Dockerfile), if any: the heap settings production runs it with. The deploy checks hold this
 * reading to the Dockerfile parser's (dockerfiles.test.ts).
 */
export function imageNodeOptions(
  service: string,
  dockerfile = existsSync(join(REPO_ROOT, 'Dockerfile'))
    ? readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8')
    : '',
): string | undefined {
  let inTarget = false;
  for (const line of dockerfile.split('\n')) {
    const from = /^FROM\s+\S+\s+AS\s+(\S+)\s*$/i.exec(line);
    if (from) inTarget = from[1] === service;
    const env = inTarget ? /^ENV\s+NODE_OPTIONS="([^"]*)"\s*$/.exec(line) : null;
    if (env) return env[1];
  }
  return undefined;
}

/**
 * Starts a built service (`services/<name>/dist/start.js`) as its own process, exactly as
 * production runs it: with its image's NODE_OPTIONS unless `env` gives its own. Services listen
 * on PORT=0 and MANAGEMENT_PORT=0 (and INTERNAL_PORT=0) in tests, so parallel files never
 * collide.
 */
export async function spawnService(
  service: ServiceName,
  options: SpawnServiceOptions,
): Promise<ServiceProcess> {
  const nodeOptions = imageNodeOptions(service);
  const env = {
    MANAGEMENT_PORT: '0',
    ...(nodeOptions === undefined ? {} : { NODE_OPTIONS: nodeOptions }),
    ...options.env,
  };
  const server = await spawnServer({
    ...options,
    env,
    name: options.name ?? service,
    script: join(options.root ?? REPO_ROOT, 'services', service, 'dist/start.js'),
  });
  const { managementPort, managementUrl } = server;
  if (managementPort === undefined || managementUrl === undefined) {
    await server.stop('SIGKILL');
    throw new Error(`${server.name} did not say where its management port listens`);
  }
  return { ...server, service, managementPort, managementUrl };
}
