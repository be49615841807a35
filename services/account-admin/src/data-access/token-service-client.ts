/**
 * The one client of the token service's internal API (docs/architecture.md). Every call has
 * a timeout and carries the request id; a network failure, timeout or 5xx becomes
 * `TokenServiceUnavailable` (503), and 4xx answers keep the token service's status and message.
 */
import { AppError, currentRequestId, REQUEST_ID_HEADER, type Grant, type ServiceAccount, type ServiceAccountRole, type ServiceAccountWithSecret, type User } from '@plant/shared';
import { TokenServiceUnavailable } from '../domain/errors.js';

export interface TokenServiceClientOptions {
  baseUrl: string;
  internalToken: string;
  /** Per call, ms (default 5000). */
  timeoutMs?: number;
}

export interface TokenServiceClient {
  getTenant(tenant: string): Promise<{ tenant: string; created_at: string }>;
  listServiceAccounts(tenant: string): Promise<ServiceAccount[]>;
  getServiceAccount(tenant: string, clientId: string): Promise<ServiceAccount>;
  createServiceAccount(tenant: string, name: string, actor: string): Promise<ServiceAccountWithSecret>;
  updateServiceAccount(tenant: string, clientId: string, change: { role?: ServiceAccountRole; grants?: Grant[] }, actor: string): Promise<ServiceAccount>;
  resetSecret(tenant: string, clientId: string, actor: string): Promise<ServiceAccountWithSecret>;
  deleteServiceAccount(tenant: string, clientId: string): Promise<void>;
  getUser(tenant: string, id: string): Promise<User>;
  ping(): Promise<void>;
}

/** Only the contract's fields travel on: an extra field from a newer token service never leaks out. */
function serviceAccountOf(body: ServiceAccount): ServiceAccount {
  return {
    name: body.name,
    client_id: body.client_id,
    role: body.role,
    grants: (body.grants ?? []).map((g) => ({ tag: g.tag, permission: g.permission })),
    created_at: body.created_at,
    created_by: body.created_by ?? null,
    last_used_at: body.last_used_at ?? null,
  };
}

export function createTokenServiceClient({ baseUrl, internalToken, timeoutMs = 5000 }: TokenServiceClientOptions): TokenServiceClient {
  const base = baseUrl.replace(/\/+$/, '');
  const seg = encodeURIComponent;

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${internalToken}`, accept: 'application/json' };
    const requestId = currentRequestId();
    if (requestId !== undefined) headers[REQUEST_ID_HEADER] = requestId;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new TokenServiceUnavailable(undefined, { cause: err });
    }
    if (res.status === 204) return undefined as T;
    let parsed: unknown;
    try {
      parsed = await res.json();
    } catch (err) {
      throw new TokenServiceUnavailable(undefined, { cause: err });
    }
    if (res.ok) return parsed as T;
    const message = typeof (parsed as { message?: unknown })?.message === 'string' ? (parsed as { message: string }).message : undefined;
    // 401/403 here mean our internal token is wrong: a deployment fault, not the caller's.
    if (res.status >= 500 || res.status === 401 || res.status === 403) {
      throw new TokenServiceUnavailable(undefined, { cause: new Error(`token service answered ${res.status}`) });
    }
    throw new AppError(res.status, message ?? 'Request refused by the token service');
  }

  const realm = (tenant: string) => `/internal/v1/realms/${seg(tenant)}`;
  return {
    getTenant: (tenant) => call('GET', realm(tenant)),
    async listServiceAccounts(tenant) {
      return (await call<ServiceAccount[]>('GET', `${realm(tenant)}/service-accounts`)).map(serviceAccountOf);
    },
    async getServiceAccount(tenant, clientId) {
      return serviceAccountOf(await call('GET', `${realm(tenant)}/service-accounts/${seg(clientId)}`));
    },
    async createServiceAccount(tenant, name, actor) {
      const created = await call<ServiceAccountWithSecret>('POST', `${realm(tenant)}/service-accounts`, { name, actor });
      return { ...serviceAccountOf(created), secret: created.secret };
    },
    async updateServiceAccount(tenant, clientId, change, actor) {
      return serviceAccountOf(await call('PATCH', `${realm(tenant)}/service-accounts/${seg(clientId)}`, { ...change, actor }));
    },
    async resetSecret(tenant, clientId, actor) {
      const reset = await call<ServiceAccountWithSecret>('POST', `${realm(tenant)}/service-accounts/${seg(clientId)}/reset-secret`, { actor });
      return { ...serviceAccountOf(reset), secret: reset.secret };
    },
    async deleteServiceAccount(tenant, clientId) {
      await call<void>('DELETE', `${realm(tenant)}/service-accounts/${seg(clientId)}`);
    },
    getUser: (tenant, id) => call('GET', `${realm(tenant)}/users/${seg(id)}`),
    async ping() {
      // Any answer from the internal listener (a 404 for an unknown realm included) proves it is up.
      try {
        await call('GET', '/internal/v1/realms/-');
      } catch (err) {
        if (err instanceof TokenServiceUnavailable) throw err;
      }
    },
  };
}
