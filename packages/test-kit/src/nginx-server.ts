/**
 * An nginx (Debian's) of a test's own: the caller writes the `http { }` block's contents
 * (upstreams and servers), this runs one worker in the foreground with every file it
 * writes (pid, logs, temporary bodies) in a directory of its own.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { daemonDir, spawnDaemon, waitListening, type Daemon } from './local-daemon.js';

const run = promisify(execFile);

export interface NginxServer {
  /** Its directory: `access.log` and `error.log` are there. */
  dir: string;
  /** Every access log line so far (the caller chose their format). */
  accessLog(): string[];
  /** nginx's own complaints so far (warnings and errors: an upstream that reset a connection, …). */
  errorLog(): string[];
  stop(): Promise<void>;
}

export interface NginxOptions {
  /** The contents of the `http { }` block; `{dir}` stands for the server's directory. */
  http: string;
  /** Ports the servers listen on: it is up once each accepts. */
  ports: number[];
}

export async function startNginx({ http, ports }: NginxOptions): Promise<NginxServer> {
  const dir = await daemonDir('nginx');
  const at = (name: string) => join(dir.path, name);
  const conf = [
    // As root, nginx would hand its workers to `nobody`, who cannot write the temporary directory.
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    'worker_processes 1;',
    'daemon off;',
    `pid ${at('nginx.pid')};`,
    `error_log ${at('error.log')} warn;`,
    'events { worker_connections 2048; }',
    'http {',
    `  client_body_temp_path ${at('client_body')};`,
    `  proxy_temp_path ${at('proxy')};`,
    `  fastcgi_temp_path ${at('fastcgi')};`,
    `  uwsgi_temp_path ${at('uwsgi')};`,
    `  scgi_temp_path ${at('scgi')};`,
    http.replaceAll('{dir}', dir.path),
    '}',
    '',
  ].join('\n');
  writeFileSync(at('nginx.conf'), conf);
  let daemon: Daemon | undefined;
  try {
    await run('nginx', ['-t', '-q', '-p', dir.path, '-c', at('nginx.conf'), '-e', at('error.log')]);
    daemon = spawnDaemon(
      'nginx',
      'nginx',
      ['-p', dir.path, '-c', at('nginx.conf'), '-e', at('error.log')],
      at('stdout.log'),
    );
    await waitListening(daemon, ports);
  } catch (err) {
    await daemon?.stop('SIGKILL');
    dir.remove();
    throw err;
  }
  return {
    dir: dir.path,
    accessLog: () => readFileSync(at('access.log'), 'utf8').split('\n').filter(Boolean),
    errorLog: () => readFileSync(at('error.log'), 'utf8').split('\n').filter(Boolean),
    async stop() {
      // SIGTERM: fast shutdown (SIGQUIT would wait for keep-alive clients).
      await daemon.stop('SIGTERM');
      dir.remove();
    },
  };
}
