/**
 * Postgres as an operator runs it for high availability and recovery, on this machine: a
 * primary and a streaming standby (pg_basebackup -R) with synchronous replication, a WAL
 * archive fed synchronously by pg_receivewal, base backups, and restores from them. Every
 * server is Debian's `postgres` in the foreground, a child of the test (so a SIGKILL is a real
 * crash, not pg_ctl's shutdown), on a loopback port and in a temporary directory of its own.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  chownSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, freePort } from './waiting.js';

const run = promisify(execFile);

function pgBin(name: string): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return `/usr/lib/postgresql/${versions[0]}/bin/${name}`;
}

/** Postgres refuses to run as root: as root every server and tool runs as the `postgres` user. */
async function runAs(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const [uid, gid] = await Promise.all([
    run('id', ['-u', 'postgres']),
    run('id', ['-g', 'postgres']),
  ]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

async function tool(name: string, args: string[]): Promise<string> {
  const ids = await runAs();
  const [cmd, argv] =
    ids === undefined
      ? [pgBin(name), args]
      : ['runuser', ['-u', 'postgres', '--', pgBin(name), ...args]];
  return (await run(cmd, argv, { maxBuffer: 16 * 1024 * 1024 })).stdout;
}

/** A process of a Postgres binary in the foreground (postgres, pg_receivewal), its output into `logFile`. */
interface Foreground {
  child: ChildProcess;
  running(): boolean;
  exited: Promise<unknown>;
}

async function foreground(name: string, args: string[], logFile: string): Promise<Foreground> {
  const ids = await runAs();
  const out = openSync(logFile, 'a');
  const child = spawn(pgBin(name), args, { stdio: ['ignore', out, out], ...(ids ?? {}) });
  closeSync(out);
  return {
    child,
    running: () => child.exitCode === null && child.signalCode === null,
    exited: once(child, 'exit'),
  };
}

/** The direct children of a process (a postmaster's backends, walsender, checkpointer…). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid …`: comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return children;
}

export interface PostgresNode {
  name: string;
  port: number;
  dataDir: string;
  /** `postgres://postgres@127.0.0.1:<port>/<database>` (trust authentication on loopback). */
  urlOf(database?: string): string;
  running(): boolean;
  /** Starts it (again) and waits until it accepts queries. */
  start(): Promise<void>;
  /** A crash: the postmaster and every one of its processes SIGKILLed at once (no shutdown checkpoint, nothing flushed). */
  kill(): Promise<void>;
  /** `pg_ctl stop -m fast`. */
  stop(): Promise<void>;
  /** `pg_ctl promote -w`: a standby becomes a primary (a new timeline). */
  promote(): Promise<void>;
  /** One query through psql as postgres (`-qAt`): its output. */
  sql(sql: string, database?: string): Promise<string>;
  /** The log so far. */
  log(): string;
}

/** Server settings beside `port`, `listen_addresses` and the socket directory (`-c name=value`: values are taken as they are, no quotes). */
type Settings = Record<string, string>;

async function node(
  name: string,
  dir: string,
  dataDir: string,
  settings: Settings,
): Promise<PostgresNode> {
  const port = await freePort();
  const logFile = join(dir, `${name}.log`);
  let server: Foreground | undefined;
  const args = () => [
    '-D',
    dataDir,
    '-c',
    `port=${port}`,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${dir}`,
    ...Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
  ];
  const sql = async (query: string, database = 'postgres') =>
    (
      await run('psql', [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        database,
        '-v',
        'ON_ERROR_STOP=1',
        '-qAt',
        '-c',
        query,
      ])
    ).stdout.trim();
  const self: PostgresNode = {
    name,
    port,
    dataDir,
    urlOf: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    running: () => server?.running() ?? false,
    async start() {
      server = await foreground('postgres', args(), logFile);
      const started = server;
      // A standby takes queries once it has replayed to a consistent point; a restore once recovery has ended.
      await eventually(
        async () => {
          if (!started.running()) throw new Error(`${name} exited: ${self.log().slice(-2000)}`);
          return sql('select 1').then(
            () => true,
            () => false,
          );
        },
        `${name} accepts queries`,
        60_000,
      );
    },
    async kill() {
      const current = server;
      if (current === undefined || !current.running()) return;
      const pid = current.child.pid!;
      // Stopped, the postmaster forks no new backend while its children are listed.
      process.kill(pid, 'SIGSTOP');
      const children = childrenOf(pid);
      process.kill(pid, 'SIGKILL');
      for (const child of children) {
        try {
          process.kill(child, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await current.exited;
      // Orphans are reaped by init: wait until none is left holding the port or the data directory.
      await eventually(
        () => children.every((child) => !readdirSync('/proc').includes(String(child))),
        `${name}'s processes are gone`,
        10_000,
      );
    },
    async stop() {
      if (!self.running()) return;
      await tool('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
      await server?.exited;
    },
    async promote() {
      await tool('pg_ctl', ['-D', dataDir, '-w', '-t', '60', 'promote']);
    },
    sql,
    log: () => {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    },
  };
  return self;
}

/**
 * Durable as a production server is against a process crash: synchronous_commit on (a commit
 * is acknowledged once the synchronous standbys have flushed it too). fsync and full-page
 * writes are off: a SIGKILLed process loses nothing the kernel already holds, and the test
 * never crashes the kernel.
 */
const COMMON: Settings = {
  fsync: 'off',
  full_page_writes: 'off',
  synchronous_commit: 'on',
  max_connections: '200',
  wal_level: 'replica',
  max_wal_senders: '10',
  wal_keep_size: '256MB',
};

export interface PostgresCluster {
  dir: string;
  primary: PostgresNode;
  /** The streaming standby (`withStandby`). */
  standby?: PostgresNode;
  /** The WAL archive pg_receivewal writes synchronously (`withArchive`). */
  archiveDir?: string;
  /**
   * A base backup of the primary taken now (`pg_basebackup -X stream`, which may run under
   * load): its directory.
   */
  baseBackup(): Promise<string>;
  /**
   * A new server from a base backup, recovered with the archive's WAL (the unfinished last
   * segment included, as pg_receivewal left it) to the latest point, or to `targetTime`.
   */
  restore(backupDir: string, options?: { targetTime?: string }): Promise<PostgresNode>;
  /** Stops every server it started (SIGKILL: nothing to keep) and deletes the directory. */
  destroy(): Promise<void>;
}

export interface PostgresClusterOptions {
  /** A streaming standby, synchronous: a commit is acknowledged once it is on both. */
  withStandby?: boolean;
  /** A WAL archive fed by pg_receivewal as a synchronous standby: an acknowledged commit is in the archive. */
  withArchive?: boolean;
}

/** Names the primary waits for (application_name of the walreceiver and of pg_receivewal). */
function synchronousNames({ withStandby, withArchive }: PostgresClusterOptions): string {
  const names = [...(withStandby ? ['standby'] : []), ...(withArchive ? ['archive'] : [])];
  // Every one of them: with both, the standby and the archive each hold every acknowledged commit.
  return names.length === 0 ? '' : `FIRST ${names.length} (${names.join(', ')})`;
}

// long: one cluster's whole life (initdb, primary, standby, archive, backups, restores, teardown) in one place.
export async function startPostgresCluster(
  options: PostgresClusterOptions = {},
): Promise<PostgresCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'pg-cluster-'));
  const ids = await runAs();
  if (ids !== undefined) chownSync(dir, ids.uid, ids.gid);
  const mkdir = (path: string) => {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    if (ids !== undefined) chownSync(path, ids.uid, ids.gid);
    return path;
  };
  const nodes: PostgresNode[] = [];
  const daemons: Foreground[] = [];
  const destroy = async () => {
    for (const daemon of daemons) if (daemon.running()) daemon.child.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.kill().catch(() => undefined)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const primaryData = join(dir, 'primary');
    await tool('initdb', [
      '-D',
      primaryData,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    const primary = await node('primary', dir, primaryData, {
      ...COMMON,
      synchronous_standby_names: synchronousNames(options),
    });
    nodes.push(primary);
    await primary.start();
    const cluster: PostgresCluster = {
      dir,
      primary,
      async baseBackup() {
        const target = join(mkdir(join(dir, 'backups')), `base-${Date.now()}`);
        await tool('pg_basebackup', [
          '-h',
          '127.0.0.1',
          '-p',
          String(primary.port),
          '-U',
          'postgres',
          '-D',
          target,
          '-X',
          'stream',
          '-c',
          'fast',
          '--no-sync',
        ]);
        return target;
      },
      async restore(backupDir, { targetTime } = {}) {
        const archive = cluster.archiveDir;
        if (archive === undefined) throw new Error('restore needs the cluster started withArchive');
        const data = join(dir, `restored-${nodes.length}`);
        // As root, cp -a keeps the files the postgres user's.
        await run('cp', ['-a', backupDir, data]);
        // pg_receivewal's unfinished segment is `<name>.partial`: recovery reads it under its own name.
        for (const file of readdirSync(archive))
          if (file.endsWith('.partial'))
            renameSync(join(archive, file), join(archive, file.slice(0, -8)));
        writeFileSync(join(data, 'recovery.signal'), '');
        if (ids !== undefined) chownSync(join(data, 'recovery.signal'), ids.uid, ids.gid);
        const restored = await node(`restored-${nodes.length}`, dir, data, {
          ...COMMON,
          restore_command: `cp ${archive}/%f %p`,
          recovery_target_timeline: 'latest',
          ...(targetTime === undefined
            ? {}
            : {
                // Postgres reads `2026-01-02 03:04:05.678+00`, not ISO 8601's T and Z.
                recovery_target_time: targetTime.replace('T', ' ').replace(/Z$/, '+00'),
                recovery_target_action: 'promote',
              }),
        });
        nodes.push(restored);
        await restored.start();
        return restored;
      },
      destroy,
    };
    if (options.withArchive) {
      const archive = mkdir(join(dir, 'archive'));
      cluster.archiveDir = archive;
      await tool('pg_receivewal', [
        '-h',
        '127.0.0.1',
        '-p',
        String(primary.port),
        '-U',
        'postgres',
        '--create-slot',
        '--slot',
        'archive',
      ]);
      const receiver = await foreground(
        'pg_receivewal',
        [
          '-d',
          `host=127.0.0.1 port=${primary.port} user=postgres application_name=archive`,
          '-D',
          archive,
          '--slot',
          'archive',
          '--synchronous',
          '--no-loop',
          '-n',
        ],
        join(dir, 'archive.log'),
      );
      daemons.push(receiver);
    }
    if (options.withStandby) {
      const standbyData = join(dir, 'standby');
      await tool('pg_basebackup', [
        '-h',
        '127.0.0.1',
        '-p',
        String(primary.port),
        '-U',
        'postgres',
        '-D',
        standbyData,
        '-R',
        '-X',
        'stream',
        '--no-sync',
      ]);
      // The walreceiver names itself by cluster_name: the name synchronous_standby_names waits for.
      const standby = await node('standby', dir, standbyData, {
        ...COMMON,
        cluster_name: 'standby',
      });
      nodes.push(standby);
      await standby.start();
      cluster.standby = standby;
    }
    const expected = (options.withStandby ? 1 : 0) + (options.withArchive ? 1 : 0);
    await eventually(
      async () =>
        Number(
          await primary.sql(
            "select count(*) from pg_stat_replication where sync_state in ('sync', 'quorum')",
          ),
        ) === expected,
      'every synchronous standby streams',
      60_000,
    );
    return cluster;
  } catch (err) {
    await destroy();
    throw err;
  }
}
