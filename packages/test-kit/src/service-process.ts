import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { REPO_ROOT } from './env.js';
import { eventually } from './waiting.js';

export type ServiceName = 'plant-store' | 'token-service' | 'account-admin';

export interface ServiceProcess {
  name: ServiceName;
  child: ChildProcess;
  /** Public port and base URL (http://127.0.0.1:port). */
  port: number;
  url: string;
  /** The token service's internal listener, when the service has one. */
  internalPort?: number;
  internalUrl?: string;
  /**
   * Every line the process wrote to stdout and stderr so far. Services buffer their log
   * output (up to 100 ms): read `flushedLogs()` to see everything logged before a point.
   */
  logs: string[];
  /**
   * Every line logged before this call: sends a request with a fresh request id and waits for
   * its access line; lines leave the process in order, so all earlier ones are in by then.
   */
  flushedLogs(): Promise<string[]>;
  /** SIGTERM (or the given signal), then wait for exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface SpawnServiceOptions {
  env: Record<string, string>;
  /** How long to wait for the `listening` log line. */
  timeoutMs?: number;
}

/**
 * Starts a built service (`services/<name>/dist/start.js`) as its own process, exactly as
 * production runs it, and resolves once it logs `{"msg":"listening","port":N}`. Services
 * listen on PORT=0 (and INTERNAL_PORT=0) in tests, so parallel files never collide.
 */
export function spawnService(name: ServiceName, { env, timeoutMs = 20_000 }: SpawnServiceOptions): Promise<ServiceProcess> {
  const script = join(REPO_ROOT, 'services', name, 'dist/start.js');
  const child = spawn(process.execPath, [script], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not report listening within ${timeoutMs} ms:\n${logs.join('\n')}`));
    }, timeoutMs);
    let buffered = '';
    const onLine = (line: string) => {
      logs.push(line);
      if (!line.startsWith('{')) return;
      let entry: { msg?: string; port?: number; internalPort?: number };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.msg === 'listening' && typeof entry.port === 'number') {
        clearTimeout(timer);
        const svc: ServiceProcess = {
          name,
          child,
          port: entry.port,
          url: `http://127.0.0.1:${entry.port}`,
          logs,
          async flushedLogs() {
            const marker = `log-flush-${randomUUID()}`;
            await fetch(`http://127.0.0.1:${entry.port}/log-flush-marker`, { headers: { 'x-request-id': marker } }).then((r) => r.arrayBuffer());
            await eventually(() => logs.some((line) => line.includes(marker)), `${name} to log request ${marker}`, 5_000);
            return logs;
          },
          stop(signal: NodeJS.Signals = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        };
        if (typeof entry.internalPort === 'number') {
          svc.internalPort = entry.internalPort;
          svc.internalUrl = `http://127.0.0.1:${entry.internalPort}`;
        }
        resolve(svc);
      }
    };
    const reader = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        onLine(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    };
    child.stdout!.on('data', reader);
    child.stderr!.on('data', reader);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before listening:\n${logs.join('\n')}`));
    });
  });
}
