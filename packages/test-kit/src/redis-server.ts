import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { daemonDir } from './local-daemon.js';
import { eventually, freePort } from './waiting.js';

const run = promisify(execFile);

/** A database server of a test's own, on a spare port, that the test may stop and start at will. */
export interface LocalServer {
  port: number;
  url: string;
  /** Stops it: every client sees its connection closed, new ones are refused. */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves once it answers. */
  start(): Promise<void>;
}

/** `start()` gives a fresh, empty server (no persistence). */
export interface RedisServer extends LocalServer {
  /** Runs redis-cli against it, e.g. `cli('CLIENT', 'KILL', ...)`; resolves with its output. */
  cli(...args: string[]): Promise<string>;
}

/**
 * A redis-server of the test file's own, on a spare port: the test may stop, restart, flush
 * and CLIENT KILL it without touching the shared Redis other engineers and test files use.
 */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let dir: Awaited<ReturnType<typeof daemonDir>> | undefined;
  const cli = async (...args: string[]) => (await run('redis-cli', ['-p', String(port), ...args])).stdout.trim();
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    cli,
    async start() {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) return;
      // `--dir`: whatever the server writes (an RDB on a replica's sync or a SAVE) goes to a
      // temporary directory of its own, never the working directory (a dump.rdb once got committed).
      dir = await daemonDir('redis-server');
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir.path, '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' });
      await eventually(async () => (await cli('PING').catch(() => '')) === 'PONG', 'redis-server answers', 10_000);
    },
    async stop() {
      const running = child;
      const files = dir;
      child = undefined;
      dir = undefined;
      if (running !== undefined && running.exitCode === null && running.signalCode === null) {
        const exited = once(running, 'exit');
        running.kill('SIGTERM');
        await exited;
      }
      files?.remove();
    },
  };
  await server.start();
  return server;
}
