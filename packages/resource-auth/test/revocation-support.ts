/**
 * Test doubles for the revocation component tests: a stand-in for the token service's
 * internal revocation API (backed by an in-memory table playing Postgres) and a dedicated
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
