/**
 * The platform of the end-to-end tests: `startPlatform` of @plant/test-kit (every service a
 * process, a redis-server of its own, optionally a Postgres cluster of its own), plus the
 * clients the tests drive it with, each answering the raw `Answer` so a test can assert it whole.
 */
import {
  startPlatform as startProcesses,
  type PlatformOptions,
  type Platform as Processes,
  type RedisServer,
  type ServiceAccount,
  type ServiceProcess,
} from '@plant/test-kit';
import type { Agent } from 'node:http';
import { httpRequest, keepAliveAgent, type Answer } from './http-client.js';
import { signInClient, type SignInClient } from './sign-in-client.js';

export {
  ACCOUNT_ADMIN_AUDIENCE,
  PLANT_STORE_AUDIENCE,
  TEST_SECRETS,
  USER_PASSWORD,
  type PlatformOptions,
  type ServiceAccount,
} from '@plant/test-kit';

export interface Platform extends Processes, SignInClient {
  redis: RedisServer;
  /** Internal API, as account-admin calls it. */
  internal(method: string, path: string, body?: unknown): Promise<Answer>;
  /** The raw answer of the client credentials grant (client_secret_post), sent through `agent` (one bound to its own loopback address keeps the throttle's counters apart). */
  requestToken(
    tenant: string,
    clientId: string,
    secret: string,
    extra?: Record<string, string>,
    agent?: Agent,
  ): Promise<Answer>;
  listPlants(token: string, query?: string, store?: ServiceProcess): Promise<Answer>;
  createPlant(token: string, plant: unknown, store?: ServiceProcess): Promise<Answer>;
}

/** One gauge or counter value from a process's /metrics, on its management port (first series of that name). */
export async function metric(svc: ServiceProcess, name: string): Promise<number | undefined> {
  const text = (await httpRequest(`${svc.managementUrl}/metrics`)).text;
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

export async function startPlatform(
  options: Omit<PlatformOptions, 'redisUrl'> = {},
): Promise<Platform> {
  const processes = await startProcesses(options);
  const internalHeaders = {
    authorization: `Bearer ${processes.secrets.ACCOUNT_ADMIN_INTERNAL_TOKEN}`,
    'content-type': 'application/json',
  };
  const clients: Omit<Platform, keyof Processes> & { redis: RedisServer } = {
    redis: processes.redis!,
    ...signInClient({
      authUrl: processes.authUrl,
      portalUrl: processes.portalUrl,
      hasPortal: () => processes.accountAdmin !== undefined,
    }),
    internal(method, path, body) {
      return httpRequest(`${processes.internalUrl}${path}`, {
        method,
        headers: internalHeaders,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    },
    requestToken(tenant, clientId, secret, extra = {}, agent = keepAliveAgent) {
      return httpRequest(`${processes.authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: secret,
          ...extra,
        }).toString(),
      });
    },
    listPlants(token, query = 'limit=1000', store = processes.plantStores[0]!) {
      return httpRequest(`${store.url}/plants?${query}`, {
        headers: { authorization: `Bearer ${token}` },
      });
    },
    createPlant(token, plant, store = processes.plantStores[0]!) {
      return httpRequest(`${store.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: typeof plant === 'string' ? plant : JSON.stringify(plant),
      });
    },
  };
  return Object.assign(processes, clients);
}

/** A platform, a tenant of its own (a unique name starting with `prefix`) and an Edit service account of that tenant. */
export async function startPlatformWithEditor(
  prefix: string,
  options: Omit<PlatformOptions, 'redisUrl'> = {},
): Promise<{ p: Platform; tenant: string; account: ServiceAccount }> {
  const p = await startPlatform(options);
  const tenant = await p.createTenant(prefix);
  return { p, tenant, account: await p.createServiceAccount(tenant, { role: 'Edit' }) };
}
