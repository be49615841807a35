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
  /**
   * Seconds PgBouncer waits after a failed server login before it tries again (its default
   * 15): a pooler in front of a failing-over primary retries within a second.
   */
  serverLoginRetry?: number;
}

export interface PgBouncerServer {
  port: number;
  /** Its process (a benchmark counts its CPU with the pooled side's). */
  pid: number;
  /** A client URL of one of its databases as one of its users. */
  urlOf(database: string, user: string): string;
  /** The log lines so far (errors such as a missing prepared statement are the server's, not PgBouncer's). */
  logFile: string;
  /**
   * Points every database at another server (a promoted standby) and reloads (SIGHUP):
   * PgBouncer closes each server connection to the old one as its client releases it, and
   * opens the next ones to the new server. What a failover manager does to its pooler.
   */
  repoint(serverUrl: string): Promise<void>;
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
  serverLoginRetry = 15,
}: PgBouncerOptions): Promise<PgBouncerServer> {
  // PgBouncer refuses to run as root: as root it switches to the postgres user, which must own its files.
  const asRoot = process.getuid?.() === 0;
  const dir = await daemonDir('pgbouncer', asRoot ? 'postgres' : undefined);
  const port = await freePort();
  const logFile = join(dir.path, 'pgbouncer.log');
  const dbLines = (target: string) => {
    const server = new URL(target);
    return Object.entries(databases).map(([alias, db]) => {
      const connect =
        db.connectQuery === undefined
          ? ''
          : ` connect_query='${db.connectQuery.replace(/'/g, "''")}'`;
      return `${alias} = host=${serverSocketDir ?? server.hostname} port=${server.port || '5432'} dbname=${db.dbname}${connect}`;
    });
  };
  writeFileSync(
    join(dir.path, 'users.txt'),
    Object.entries(users)
      .map(([user, password]) => `${quote(user)} ${quote(password)}\n`)
      .join(''),
    { mode: 0o644 },
  );
  const writeConfig = (target: string) =>
    writeFileSync(
      join(dir.path, 'pgbouncer.ini'),
      [
        '[databases]',
        ...dbLines(target),
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
        `server_login_retry = ${serverLoginRetry}`,
        '',
      ].join('\n'),
      { mode: 0o644 },
    );
  writeConfig(serverUrl);
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
    async repoint(target) {
      writeConfig(target);
      process.kill(daemon.pid, 'SIGHUP');
    },
    async stop() {
      await daemon.stop('SIGTERM');
      dir.remove();
    },
  };
}
