/**
 * The platform of the revocation end-to-end tests (`startPlatform` of @plant/test-kit: a
 * redis-server of the test file's own, so it can be stopped, restarted, flushed and its
 * subscribers killed without disturbing anyone), with Plant Store clients whose answers the
 * tests compare whole, and a way to wait until a change has reached every Plant Store.
 */
import {
  eventually,
  startPlatform as startProcesses,
  type Platform as Processes,
  type RedisServer,
  type ServiceProcess,
} from '@plant/test-kit';

export interface HttpAnswer {
  status: number;
  body: unknown;
  wwwAuthenticate: string | null;
}

async function http(url: string, init: RequestInit = {}): Promise<HttpAnswer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, wwwAuthenticate: res.headers.get('www-authenticate') };
}

/** `GET /plants?limit=1` with the token. */
export function listPlants(store: ServiceProcess, token: string): Promise<HttpAnswer> {
  return http(`${store.url}/plants?limit=1`, { headers: { authorization: `Bearer ${token}` } });
}

/** `POST /plants` with the token. */
export function createPlant(
  store: ServiceProcess,
  token: string,
  plant: { id: number; name: string; tag?: string },
): Promise<HttpAnswer> {
  return http(`${store.url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(plant),
  });
}

export interface Platform extends Processes {
  redis: RedisServer;
  /**
   * Runs a change (reset, delete, role/grant change) and resolves once every Plant Store has
   * received its revocation event. The token service publishes before it answers, but delivery
   * to the subscribers is asynchronous: on a loaded 2-core machine about 1 % of first calls made
   * right after the API response still land a few ms before the event (see `pnpm
   * bench:revocation`, "stale 200s"; the design's target is p99 <= 50 ms, not zero). The tests
   * assert what happens at the next call once the change has been published.
   */
  published<T>(change: () => Promise<T>): Promise<T>;
  /** The answer of every Plant Store to `GET /plants?limit=1` with `token`, in order. */
  atEveryStore(token: string): Promise<HttpAnswer[]>;
}

/** A Plant Store's count of revocation events received so far. */
export async function eventsReceived(store: ServiceProcess): Promise<number> {
  const text = (await http(`${store.managementUrl}/metrics`)).body as string;
  return [...text.matchAll(/^revocation_events_received_total(?:\{[^}]*\})? (\S+)$/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
}

/** The token service and `stores` Plant Store processes on the test database and a redis-server of their own. */
export async function startPlatform({
  stores = 2,
  resyncMs = 5000,
}: {
  stores?: number;
  resyncMs?: number;
} = {}): Promise<Platform> {
  const processes = await startProcesses({ plantStores: stores, resyncMs });
  return Object.assign(processes, {
    redis: processes.redis!,
    async published<T>(change: () => Promise<T>): Promise<T> {
      const targets = [...processes.plantStores];
      const before = await Promise.all(targets.map(eventsReceived));
      const result = await change();
      await eventually(
        async () =>
          (await Promise.all(targets.map(eventsReceived))).every((n, i) => n > before[i]!),
        'every Plant Store received the event',
        10_000,
      );
      return result;
    },
    atEveryStore: (token: string) =>
      Promise.all(processes.plantStores.map((store) => listPlants(store, token))),
  });
}

/** Two Plant Stores that re-sync only every 60 s (so only the published events can revoke in time), and a tenant. */
export async function startRevocationPlatform(): Promise<{ platform: Platform; tenant: string }> {
  const platform = await startPlatform({ stores: 2, resyncMs: 60_000 });
  return { platform, tenant: await platform.createTenant() };
}

/** The 401 a revoked token gets (RFC 6750 `invalid_token`, the message says it was revoked). */
export const REVOKED = {
  status: 401,
  body: { error: 401, message: 'Token has been revoked' },
  wwwAuthenticate:
    'Bearer realm="plants", error="invalid_token", error_description="Token has been revoked"',
} as const;

/** What a valid token gets from `GET /plants?limit=1` on a tenant without plants. */
export const LISTED = { status: 200, body: [], wwwAuthenticate: null } as const;
