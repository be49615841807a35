/**
 * A server binary of a test's own (nginx, pgbouncer, redis-server, redis-sentinel): its
 * configuration and files in a temporary directory of its own, on loopback ports of its own,
 * never the shared instances' configuration.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from './waiting.js';

const run = promisify(execFile);

export interface Daemon {
  name: string;
  pid: number;
  running(): boolean;
  /** Sends the signal (default SIGTERM) and waits for the exit; SIGKILL after 10 s. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** uid and gid of a system user (pgbouncer and Postgres refuse to run as root). */
async function idsOf(user: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', user]), run('id', ['-g', user])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** A fresh temporary directory; as root, owned by `owner` when the daemon will run as that user. */
export async function daemonDir(
  prefix: string,
  owner?: string,
): Promise<{ path: string; remove(): void }> {
  const path = mkdtempSync(join(tmpdir(), `${prefix}-`));
  if (owner !== undefined && process.getuid?.() === 0) {
    const { uid, gid } = await idsOf(owner);
    chownSync(path, uid, gid);
  }
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Runs `command args` in the foreground, its output appended to `logFile`. */
export function spawnDaemon(
  name: string,
  command: string,
  args: string[],
  logFile: string,
): Daemon {
  const out = openSync(logFile, 'a');
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', out, out] });
  closeSync(out);
  const exited = once(child, 'exit');
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    name,
    pid: child.pid!,
    running,
    async stop(signal = 'SIGTERM') {
      if (!running()) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** True when something accepts a TCP connection on 127.0.0.1:port. */
export function accepts(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Waits until every port accepts connections; throws naming the daemon (and that it exited) otherwise. */
export async function waitListening(
  daemon: Daemon,
  ports: number[],
  timeoutMs = 10_000,
): Promise<void> {
  await eventually(
    async () => {
      if (!daemon.running()) throw new Error(`${daemon.name} exited before it listened`);
      return (await Promise.all(ports.map((port) => accepts(port)))).every(Boolean);
    },
    `${daemon.name} listens on ${ports.join(', ')}`,
    timeoutMs,
  );
}
