/**
 * A PgBouncer (Debian's `pgbouncer`) of a test's or benchmark's own in front of a Postgres
 * server, in transaction pooling as production runs it: a server connection belongs to a
 * client for one transaction only, so nothing a session sets (SET, named prepared
 * statements on PgBouncer < 1.21, advisory locks) carries over to the client's next one.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { daemonDir, spawnDaemon, waitListening, type Daemon } from './local-daemon.js';
import { freePort } from './waiting.js';

export interface PgBouncerDatabase {
  /** The database on the Postgres server. */
  dbname: string;
  /** Run on every new server connection (e.g. `set search_path to plants` where roles do not set it). */
  connectQuery?: string;
}

export interface PgBouncerOptions {
  /** The Postgres server pooled (host, port; its other parts are ignored). */
  serverUrl: string;
  /** Reach it at this Unix socket directory instead of its host (PgBouncer on the database's machine, its classic place). */
  serverSocketDir?: string;
  /** Database names clients connect to, each a database of the server. */
  databases: Record<string, PgBouncerDatabase>;
  /** Users clients sign in as (SCRAM), with their passwords; PgBouncer signs in to Postgres as the same user. */
  users: Record<string, string>;
  poolMode?: 'transaction' | 'session';
  /** Server connections per database and user (default 20). */
  poolSize?: number;
}

export interface PgBouncerServer {
  port: number;
  /** Its process (a benchmark counts its CPU with the pooled side's). */
  pid: number;
  /** A client URL of one of its databases as one of its users. */
  urlOf(database: string, user: string): string;
  /** The log lines so far (errors such as a missing prepared statement are the server's, not PgBouncer's). */
  logFile: string;
  stop(): Promise<void>;
}

const quote = (value: string) => `"${value.replace(/"/g, '""')}"`;

export async function startPgBouncer({
  serverUrl,
  serverSocketDir,
  databases,
  users,
  poolMode = 'transaction',
  poolSize = 20,
}: PgBouncerOptions): Promise<PgBouncerServer> {
  // PgBouncer refuses to run as root: as root it switches to the postgres user, which must own its files.
  const asRoot = process.getuid?.() === 0;
  const dir = await daemonDir('pgbouncer', asRoot ? 'postgres' : undefined);
  const server = new URL(serverUrl);
  const port = await freePort();
  const logFile = join(dir.path, 'pgbouncer.log');
  const dbLines = Object.entries(databases).map(([alias, db]) => {
    const connect =
      db.connectQuery === undefined
        ? ''
        : ` connect_query='${db.connectQuery.replace(/'/g, "''")}'`;
    return `${alias} = host=${serverSocketDir ?? server.hostname} port=${server.port || '5432'} dbname=${db.dbname}${connect}`;
  });
  writeFileSync(
    join(dir.path, 'users.txt'),
    Object.entries(users)
      .map(([user, password]) => `${quote(user)} ${quote(password)}\n`)
      .join(''),
    { mode: 0o644 },
  );
  writeFileSync(
    join(dir.path, 'pgbouncer.ini'),
    [
      '[databases]',
      ...dbLines,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${join(dir.path, 'users.txt')}`,
      `pool_mode = ${poolMode}`,
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 1000',
      // node-postgres sends none of these, but other clients (psql, JDBC) may.
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${logFile}`,
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  let daemon: Daemon | undefined;
  try {
    daemon = spawnDaemon(
      'pgbouncer',
      'pgbouncer',
      [...(asRoot ? ['-u', 'postgres'] : []), join(dir.path, 'pgbouncer.ini')],
      join(dir.path, 'stdout.log'),
    );
    await waitListening(daemon, [port]);
  } catch (err) {
    await daemon?.stop('SIGKILL');
    dir.remove();
    throw err;
  }
  return {
    port,
    pid: daemon.pid,
    logFile,
    urlOf: (database, user) =>
      `postgres://${encodeURIComponent(user)}:${encodeURIComponent(users[user] ?? '')}@127.0.0.1:${port}/${database}`,
    async stop() {
      await daemon.stop('SIGTERM');
      dir.remove();
    },
  };
}
