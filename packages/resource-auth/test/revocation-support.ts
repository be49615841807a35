/**
 * Test doubles for the revocation component tests: a stand-in for the token service's
 * internal revocation API (an in-memory change log playing Postgres) and a dedicated
 * redis-server with ioredis clients. The end-to-end tests (packages/e2e) use the real token service.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '@plant/test-kit';
import type { RevocationEntry } from '../src/index.js';

export const INTERNAL_TOKEN = 'internal-token-for-revocation-tests-7f3c9a';

export interface FakeInternalApi {
  url: string;
  /** Creates a principal at version 1 (what the token service does on create). */
  addPrincipal(tenant: string, sub: string): void;
  /**
   * Bumps the version (reset, role or grant change) or marks deleted, and appends the change to
   * the feed, needed for `ttl` seconds (default 360); returns the committed entry.
   */
  revoke(
    tenant: string,
    sub: string,
    options?: { deleted?: boolean; ttl?: number },
  ): RevocationEntry;
  /** While true every route answers 503. */
  setDown(down: boolean): void;
  /**
   * While set, resync requests (snapshot and changes) wait for the promise: 'before-read' reads
   * the feed after it (a slow request), 'after-read' reads it at once and answers after it (a slow response).
   */
  holdResyncs(gate: Promise<void> | undefined, mode?: 'before-read' | 'after-read'): void;
  /** Raises the feed's floor to its head, as pruning does: a reader behind it must reset (the snapshot still lists what is live). */
  truncate(): void;
  /** Snapshot requests and change-feed requests received (answered or not), and principal lookups, per `tenant/sub`. */
  snapshotRequests(): number;
  changesRequests(): number;
  lookups(tenant: string, sub: string): number;
  /** Requests whose Authorization was not the internal token. */
  unauthorized(): number;
  close(): Promise<void>;
}

interface Change {
  position: number;
  entry: RevocationEntry;
  /** Date.now() after which no token it revokes can be live. */
  until: number;
}

/**
 * The revocation routes of the token service's internal API over an in-memory feed: the
 * principals' state (lookups), a log of changes with positions and lifetimes (the snapshot is
 * the latest live change per principal, the changes route pages the log), and a floor below
 * which positions are truncated.
 */
export async function startFakeInternalApi(): Promise<FakeInternalApi> {
  const table = new Map<string, RevocationEntry>();
  const log: Change[] = [];
  let head = 0;
  let floor = 0;
  const lookupCounts = new Map<string, number>();
  const counts = { snapshots: 0, changes: 0, unauthorized: 0 };
  let down = false;
  let gate: Promise<void> | undefined;
  let gateMode: 'before-read' | 'after-read' = 'before-read';
  const key = (tenant: string, sub: string) => `${tenant}/${sub}`;
  const live = (change: Change, now: number) => ({
    ...change.entry,
    ttl: Math.ceil((change.until - now) / 1000),
  });

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const readSnapshot = () => {
    const now = Date.now();
    const latest = new Map<string, Change>();
    for (const change of log)
      if (change.until > now) latest.set(key(change.entry.tenant, change.entry.sub), change);
    return {
      position: String(head),
      entries: [...latest.values()].map((change) => live(change, now)),
    };
  };
  const readChanges = (after: number, limit: number) => {
    if (after < floor || after > head) return { reset: true };
    const now = Date.now();
    const page = log.filter((change) => change.position > after).slice(0, limit);
    const last = page[page.length - 1];
    const entries = page.filter((change) => change.until > now).map((change) => live(change, now));
    return {
      reset: false,
      position: String(last?.position ?? after),
      more: last !== undefined && last.position < head,
      entries,
    };
  };
  /** A resync request, held while a gate is set: read before or after it. */
  const resync = async (res: ServerResponse, read: () => unknown) => {
    if (down) return reply(res, 503, { error: 503, message: 'Service temporarily unavailable' });
    const held = gate;
    if (held && gateMode === 'before-read') await held;
    const body = read();
    if (held && gateMode === 'after-read') await held;
    reply(res, 200, body);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization !== `Bearer ${INTERNAL_TOKEN}`) {
      counts.unauthorized += 1;
      return reply(res, 401, { error: 401, message: 'Internal token required' });
    }
    const url = new URL(req.url ?? '', 'http://fake');
    if (url.pathname === '/internal/v1/revocations') {
      counts.snapshots += 1;
      return resync(res, readSnapshot);
    }
    if (url.pathname === '/internal/v1/revocations/changes') {
      counts.changes += 1;
      const after = Number(url.searchParams.get('after'));
      return resync(res, () => readChanges(after, Number(url.searchParams.get('limit') ?? 1000)));
    }
    const match = /^\/internal\/v1\/realms\/([^/]+)\/principals\/([^/]+)$/.exec(url.pathname);
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
    revoke(tenant, sub, { deleted = false, ttl = 360 } = {}) {
      const current = table.get(key(tenant, sub));
      if (!current) throw new Error(`unknown principal ${tenant}/${sub}`);
      const next = {
        tenant,
        sub,
        version: current.version + 1,
        deleted: current.deleted || deleted,
      };
      table.set(key(tenant, sub), next);
      head += 1;
      log.push({ position: head, entry: { ...next }, until: Date.now() + ttl * 1000 });
      return { ...next };
    },
    setDown(value) {
      down = value;
    },
    holdResyncs(value, mode = 'before-read') {
      gate = value;
      gateMode = mode;
    },
    truncate() {
      floor = head;
    },
    snapshotRequests: () => counts.snapshots,
    changesRequests: () => counts.changes,
    lookups: (tenant, sub) => lookupCounts.get(key(tenant, sub)) ?? 0,
    unauthorized: () => counts.unauthorized,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface DedicatedRedis extends RedisServer {
  /** A client on this server (closed by `close`). */
  client(): Redis;
  close(): Promise<void>;
}

/** The test file's own redis-server (see startRedisServer), plus ioredis clients closed with it. */
export async function startDedicatedRedis(): Promise<DedicatedRedis> {
  const server = await startRedisServer();
  const clients: Redis[] = [];
  return Object.assign(server, {
    client() {
      const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) client.disconnect();
      await server.stop();
    },
  });
}
