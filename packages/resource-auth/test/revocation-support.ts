/**
 * Test doubles for the revocation component tests: a stand-in for the token service's
 * internal revocation API (backed by an in-memory table playing Postgres), a dedicated
 * redis-server process the tests may stop, restart and flush without disturbing anyone,
 * and a log capture. The end-to-end tests (packages/e2e) use the real token service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { createLogger, type Logger } from '@plant/shared';
import type { RevocationEntry } from '../src/index.js';

export const INTERNAL_TOKEN = 'internal-token-for-revocation-tests-7f3c9a';

export interface FakeInternalApi {
  url: string;
  /** Creates a principal at version 1 (what the token service does on create). */
  addPrincipal(tenant: string, sub: string): void;
  /** Bumps the version (reset, role or grant change) or marks deleted; returns the committed entry. */
  revoke(tenant: string, sub: string, options?: { deleted?: boolean }): RevocationEntry;
  /** While true every route answers 503. */
  setDown(down: boolean): void;
  /**
   * While set, snapshot requests wait for the promise: 'before-read' reads the table after it
   * (a slow request), 'after-read' reads it at once and answers after it (a slow response).
   */
  holdSnapshots(gate: Promise<void> | undefined, mode?: 'before-read' | 'after-read'): void;
  /** Drops a principal from the snapshot (as the token service does for old deletions). */
  forget(tenant: string, sub: string): void;
  /** Snapshot requests received (answered or not) and principal lookups, per `tenant/sub`. */
  snapshotRequests(): number;
  lookups(tenant: string, sub: string): number;
  /** Requests whose Authorization was not the internal token. */
  unauthorized(): number;
  close(): Promise<void>;
}

/** The two revocation routes of the token service's internal API, over an in-memory table. */
export async function startFakeInternalApi(): Promise<FakeInternalApi> {
  const table = new Map<string, RevocationEntry>();
  const lookupCounts = new Map<string, number>();
  let snapshots = 0;
  let unauthorized = 0;
  let down = false;
  let gate: Promise<void> | undefined;
  let gateMode: 'before-read' | 'after-read' = 'before-read';
  const key = (tenant: string, sub: string) => `${tenant}/${sub}`;

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization !== `Bearer ${INTERNAL_TOKEN}`) {
      unauthorized += 1;
      return reply(res, 401, { error: 401, message: 'Internal token required' });
    }
    const url = req.url ?? '';
    if (url === '/internal/v1/revocations') {
      snapshots += 1;
      if (down) return reply(res, 503, { error: 503, message: 'Service temporarily unavailable' });
      const held = gate;
      if (held && gateMode === 'before-read') await held;
      const entries = [...table.values()].filter((e) => e.version > 1 || e.deleted).map((e) => ({ ...e }));
      if (held && gateMode === 'after-read') await held;
      return reply(res, 200, { entries });
    }
    const match = /^\/internal\/v1\/realms\/([^/]+)\/principals\/([^/]+)$/.exec(url);
    if (match) {
      const tenant = decodeURIComponent(match[1]!);
      const sub = decodeURIComponent(match[2]!);
      lookupCounts.set(key(tenant, sub), (lookupCounts.get(key(tenant, sub)) ?? 0) + 1);
      if (down) return reply(res, 503, { error: 503, message: 'Service temporarily unavailable' });
      const entry = table.get(key(tenant, sub));
      if (!entry) return reply(res, 404, { error: 404, message: 'Principal not found' });
      return reply(res, 200, entry);
    }
    reply(res, 404, { error: 404, message: 'Not found' });
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    addPrincipal(tenant, sub) {
      table.set(key(tenant, sub), { tenant, sub, version: 1, deleted: false });
    },
    revoke(tenant, sub, { deleted = false } = {}) {
      const current = table.get(key(tenant, sub));
      if (!current) throw new Error(`unknown principal ${tenant}/${sub}`);
      const next = { tenant, sub, version: current.version + 1, deleted: current.deleted || deleted };
      table.set(key(tenant, sub), next);
      return { ...next };
    },
    setDown(value) {
      down = value;
    },
    holdSnapshots(value, mode = 'before-read') {
      gate = value;
      gateMode = mode;
    },
    forget(tenant, sub) {
      table.delete(key(tenant, sub));
    },
    snapshotRequests: () => snapshots,
    lookups: (tenant, sub) => lookupCounts.get(key(tenant, sub)) ?? 0,
    unauthorized: () => unauthorized,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A free TCP port on 127.0.0.1 (closed again at once; good enough for a test's own server). */
export async function freePort(): Promise<number> {
  const probe = createNetServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export interface DedicatedRedis {
  port: number;
  url: string;
  /** SIGTERM and wait for exit (clients see their connections closed). */
  stop(): Promise<void>;
  /** Starts a fresh, empty server on the same port (no persistence) and waits until it answers. */
  start(): Promise<void>;
  /** A client on this server (closed by `close`). */
  client(): Redis;
  close(): Promise<void>;
}

/**
 * A redis-server of this test file alone, on a spare port, without persistence: the tests
 * stop, restart, flush and CLIENT KILL it; the shared Redis of the other engineers is never touched.
 */
export async function startDedicatedRedis(): Promise<DedicatedRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const clients: Redis[] = [];
  let child: ChildProcess | undefined;

  const start = async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) return;
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      stdio: 'ignore',
    });
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
    try {
      await probe.connect().catch(() => undefined);
      await probe.ping();
    } finally {
      probe.disconnect();
    }
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    port,
    url,
    stop,
    start,
    client() {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) client.disconnect();
      await stop();
    },
  };
}

export interface CapturedLogger {
  logger: Logger;
  /** Every line logged so far. */
  text(): string;
}

/** A real pino logger (with the shared redaction) whose lines the test can read. */
export function captureLogs(name = 'revocation-test'): CapturedLogger {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { logger: createLogger({ name, level: 'debug', destination }), text: () => lines.join('') };
}

/** Polls `probe` until it returns true (or throws after `timeoutMs`): for states reached asynchronously. */
export async function eventually(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
