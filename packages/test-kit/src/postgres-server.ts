/**
 * A whole Postgres cluster of the test file's own, on a spare port, so a fault test can stop
 * and restart it without touching the shared instance other engineers and test files use.
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LocalServer } from './redis-server.js';
import { freePort } from './waiting.js';

const run = promisify(execFile);

/** `url` is `postgres://postgres@127.0.0.1:<port>/plantstore`; `stop()` is `pg_ctl stop -m fast`. */
export interface PostgresServer extends LocalServer {
  /** Stops the cluster and deletes its directory. */
  destroy(): Promise<void>;
}

function pgBin(name: string): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return `/usr/lib/postgresql/${versions[0]}/bin/${name}`;
}

/** Postgres refuses to run as root; the cluster then belongs to the `postgres` system user. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0
    ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]]
    : [cmd, args];
}

/**
 * A throw-away Postgres cluster (`initdb` into a temporary directory, `pg_ctl` on a spare
 * port, trust auth, fsync off) that a test may stop and restart at will.
 */
export async function startPostgresServer(): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-pg-'));
  if (process.getuid?.() === 0)
    chownSync(
      dir,
      Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
      Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
    );
  const data = join(dir, 'data');
  const port = await freePort();
  await run(
    ...asPostgres(pgBin('initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]),
  );
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const server: PostgresServer = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/plantstore`,
    async start() {
      await run(
        ...asPostgres(pgBin('pg_ctl'), [
          '-D',
          data,
          '-o',
          options,
          '-l',
          join(dir, 'log'),
          '-w',
          '-t',
          '30',
          'start',
        ]),
      );
    },
    async stop() {
      await run(
        ...asPostgres(pgBin('pg_ctl'), ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']),
      );
    },
    async destroy() {
      await server.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
