/**
 * A Sentinel-managed Redis of a test's own (Debian's `redis-server` and `redis-sentinel`): a
 * master, its replicas and a quorum of sentinels, each on a loopback port of its own, with
 * passwords (the servers' and the sentinels' own) as production would have them. A test may
 * kill the master and watch the sentinels promote a replica.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { daemonDir, spawnDaemon, waitListening, type Daemon } from './local-daemon.js';
import { eventually, freePort } from './waiting.js';

const run = promisify(execFile);

export interface SentinelGroupOptions {
  replicas?: number;
  sentinels?: number;
  /** How long a master stays unanswering before the sentinels call it down (production: seconds; default 1000 ms). */
  downAfterMs?: number;
}

export interface RedisNode {
  port: number;
  daemon: Daemon;
}

export interface SentinelGroup {
  masterName: string;
  /** The servers' password (REDIS_URL's) and the sentinels' own (REDIS_SENTINEL_PASSWORD). */
  password: string;
  sentinelPassword: string;
  /** REDIS_SENTINELS: `127.0.0.1:<port>,…`. */
  sentinelAddresses: string;
  /** REDIS_URL beside REDIS_SENTINELS: the password; its host is not used. */
  redisUrl: string;
  servers: RedisNode[];
  sentinels: RedisNode[];
  /** The port of the master the sentinels name now. */
  masterPort(): Promise<number>;
  /** Runs redis-cli against a server (with the servers' password). */
  cli(port: number, ...args: string[]): Promise<string>;
  /** Kills the current master (SIGKILL) and resolves with its port once a sentinel names another. */
  killMaster(): Promise<{ killed: number; promoted: number; failoverMs: number }>;
  stop(): Promise<void>;
}

const MASTER_NAME = 'plantstore';

export async function startSentinelGroup({
  replicas = 1,
  sentinels = 3,
  downAfterMs = 1000,
}: SentinelGroupOptions = {}): Promise<SentinelGroup> {
  const dir = await daemonDir('redis-sentinel');
  const password = `test-redis-password-${process.pid}`;
  const sentinelPassword = `test-sentinel-password-${process.pid}`;
  const started: RedisNode[] = [];
  const cli = async (port: number, ...args: string[]) =>
    (
      await run('redis-cli', ['-p', String(port), '--no-auth-warning', '-a', password, ...args])
    ).stdout.trim();
  const sentinelCli = async (port: number, ...args: string[]) =>
    (
      await run('redis-cli', [
        '-p',
        String(port),
        '--no-auth-warning',
        '-a',
        sentinelPassword,
        ...args,
      ])
    ).stdout.trim();
  const startNode = async (name: string, command: string, args: string[]) => {
    const port = Number(args[args.indexOf('--port') + 1] ?? 0) || (await freePort());
    const daemon = spawnDaemon(name, command, args, join(dir.path, `${name}.log`));
    const node = { port, daemon };
    started.push(node);
    await waitListening(daemon, [port]);
    return node;
  };
  // Each server writes into a directory of its own in the group's temporary directory: a replica's
  // full sync saves the master's RDB as dump.rdb in its `dir`, which defaulted to the working directory.
  const serverArgs = (port: number) => {
    const serverDir = join(dir.path, `redis-${port}`);
    mkdirSync(serverDir);
    return [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      serverDir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--requirepass',
      password,
      '--masterauth',
      password,
    ];
  };
  const stop = async () => {
    await Promise.all(started.map((node) => node.daemon.stop('SIGKILL')));
    dir.remove();
  };
  try {
    const masterPort = await freePort();
    const servers = [await startNode('redis-master', 'redis-server', serverArgs(masterPort))];
    for (let i = 0; i < replicas; i++) {
      const port = await freePort();
      servers.push(
        await startNode(`redis-replica-${i + 1}`, 'redis-server', [
          ...serverArgs(port),
          '--replicaof',
          '127.0.0.1',
          String(masterPort),
        ]),
      );
    }
    const sentinelNodes: RedisNode[] = [];
    for (let i = 0; i < sentinels; i++) {
      const port = await freePort();
      const conf = join(dir.path, `sentinel-${i + 1}.conf`);
      // A sentinel rewrites its own file (what it learned of replicas and other sentinels).
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir.path}`,
          `requirepass ${sentinelPassword}`,
          `sentinel sentinel-pass ${sentinelPassword}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} ${Math.floor(sentinels / 2) + 1}`,
          `sentinel auth-pass ${MASTER_NAME} ${password}`,
          `sentinel down-after-milliseconds ${MASTER_NAME} ${downAfterMs}`,
          `sentinel failover-timeout ${MASTER_NAME} 5000`,
          '',
        ].join('\n'),
      );
      sentinelNodes.push(
        await startNode(`redis-sentinel-${i + 1}`, 'redis-sentinel', [
          conf,
          '--port',
          String(port),
        ]),
      );
    }
    const masterPortNow = async () =>
      Number(
        (
          await sentinelCli(
            sentinelNodes[0]!.port,
            'SENTINEL',
            'GET-MASTER-ADDR-BY-NAME',
            MASTER_NAME,
          )
        ).split('\n')[1],
      );
    // Ready once the replicas are in sync and every sentinel knows the others (a quorum can vote).
    await eventually(
      async () => {
        const info = await cli(masterPort, 'INFO', 'replication');
        const knownSentinels = await Promise.all(
          sentinelNodes.map(
            async (s) =>
              (await sentinelCli(s.port, 'SENTINEL', 'SENTINELS', MASTER_NAME))
                .split('\n')
                .filter((l) => l === 'name').length,
          ),
        );
        return (
          new RegExp(`connected_slaves:${replicas}`).test(info) &&
          !/state=(wait_bgsave|send_bulk)/.test(info) &&
          knownSentinels.every((n) => n === sentinels - 1)
        );
      },
      'the replicas synchronise and the sentinels find each other',
      20_000,
    );
    return {
      masterName: MASTER_NAME,
      password,
      sentinelPassword,
      sentinelAddresses: sentinelNodes.map((s) => `127.0.0.1:${s.port}`).join(','),
      redisUrl: `redis://:${password}@sentinel-managed:6379`,
      servers,
      sentinels: sentinelNodes,
      masterPort: masterPortNow,
      cli,
      async killMaster() {
        const killed = await masterPortNow();
        const node = servers.find((s) => s.port === killed)!;
        const at = Date.now();
        await node.daemon.stop('SIGKILL');
        let promoted = killed;
        await eventually(
          async () => {
            promoted = await masterPortNow().catch(() => killed);
            return promoted !== killed;
          },
          'the sentinels promote a replica',
          30_000,
        );
        return { killed, promoted, failoverMs: Date.now() - at };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
