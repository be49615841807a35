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
  for (let attempt = 1; ; attempt++) {
    const server = redisServerOn(await freePort());
    try {
      await server.start();
      return server;
    } catch (err) {
      await server.stop();
      // Another program took the port between the probe and the bind (other test runs share
      // this machine): try another port; a restart later keeps this one.
      if (!(err instanceof PortTaken) || attempt === 5) throw err;
    }
  }
}

class PortTaken extends Error {}

function redisServerOn(port: number): RedisServer {
  let child: ChildProcess | undefined;
  let dir: Awaited<ReturnType<typeof daemonDir>> | undefined;
  const cli = async (...args: string[]) =>
    (await run('redis-cli', ['-p', String(port), ...args])).stdout.trim();
  const running = (proc: ChildProcess | undefined): proc is ChildProcess =>
    proc !== undefined && proc.exitCode === null && proc.signalCode === null;
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    cli,
    async start() {
      if (running(child)) return;
      // `--dir`: whatever the server writes (an RDB on a replica's sync or a SAVE) goes to a
      // temporary directory of its own, never the working directory (a dump.rdb once got committed).
      dir = await daemonDir('redis-server');
      const started = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir.path,
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
        ],
        { stdio: 'ignore' },
      );
      child = started;
      // Up once *this* server answers: a PONG alone may come from another program's redis-server
      // on the port, while ours exited unable to bind, and the test would then use (and see
      // stopped) a server that is not its own.
      await eventually(
        async () => {
          if (!running(started))
            throw new PortTaken(
              `redis-server exited before it answered on port ${port} (taken by another program?)`,
            );
          const info = await cli('INFO', 'server').catch(() => '');
          return new RegExp(`^process_id:${started.pid}\\s*$`, 'm').test(info);
        },
        'redis-server answers',
        10_000,
      );
    },
    async stop() {
      const stopping = child;
      const files = dir;
      child = undefined;
      dir = undefined;
      if (running(stopping)) {
        const exited = once(stopping, 'exit');
        stopping.kill('SIGTERM');
        await exited;
      }
      files?.remove();
    },
  };
  return server;
}
