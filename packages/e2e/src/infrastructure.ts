/**
 * Private infrastructure for fault tests: a redis-server and a whole Postgres cluster of the
 * test file's own, on spare ports, so they can be stopped and restarted without touching the
 * shared instances other engineers and test files use.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A free TCP port on 127.0.0.1 (closed again at once). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `probe` is true; throws naming `what` after `timeoutMs`. */
export async function eventually(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(25);
  }
}

export interface RedisServer {
  port: number;
  url: string;
  /** SIGTERM and wait for the exit: every client sees its connection closed. */
  stop(): Promise<void>;
  /** A fresh, empty server on the same port; resolves once it answers PING. */
  start(): Promise<void>;
  cli(...args: string[]): Promise<string>;
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const cli = async (...args: string[]) => (await run('redis-cli', ['-p', String(port), ...args])).stdout.trim();
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    cli,
    async start() {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) return;
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' });
      await eventually(async () => (await cli('PING').catch(() => '')) === 'PONG', 'redis-server answers', 10_000);
    },
    async stop() {
      const running = child;
      child = undefined;
      if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
      const exited = once(running, 'exit');
      running.kill('SIGTERM');
      await exited;
    },
  };
  await server.start();
  return server;
}

export interface PostgresServer {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/plantstore` */
  url: string;
  /** `pg_ctl stop -m fast`: open sessions are terminated, new connections refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and deletes its directory. */
  destroy(): Promise<void>;
}

function pgBin(name: string): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return `/usr/lib/postgresql/${versions[0]}/bin/${name}`;
}

/** Postgres refuses to run as root; the cluster then belongs to the `postgres` system user. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

/**
 * A throw-away Postgres cluster (`initdb` into a temporary directory, `pg_ctl` on a spare
 * port, trust auth, fsync off) that a test may stop and restart at will.
 */
export async function startPostgresServer(): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-pg-'));
  if (process.getuid?.() === 0) chownSync(dir, Number((await run('id', ['-u', 'postgres'])).stdout.trim()), Number((await run('id', ['-g', 'postgres'])).stdout.trim()));
  const data = join(dir, 'data');
  const port = await freePort();
  await run(...asPostgres(pgBin('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']));
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const server: PostgresServer = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/plantstore`,
    async start() {
      await run(...asPostgres(pgBin('pg_ctl'), ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']));
    },
    async stop() {
      await run(...asPostgres(pgBin('pg_ctl'), ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']));
    },
    async destroy() {
      await server.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
