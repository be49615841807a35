/**
 * The setup the API test files share: one signed-in portal per file (`startSignedInPortal`,
 * started before the file's tests and stopped after them) and the calls they make to
 * /api/v1 through it, so a file split by subject does not copy its neighbour's setup.
 */
import { afterAll, beforeAll, expect } from '@jest/globals';
import { uniqueName } from '@plant/test-kit';
import type { PortalSession } from './browser-client.js';
import {
  startSignedInPortal,
  type Platform,
  type PortalHandle,
  type PortalOptions,
  type SignedInPortal,
  type TestTenant,
} from './platform.js';

/** A timestamp as the API writes it. */
export const ISO: ReturnType<typeof expect.stringMatching> = expect.stringMatching(
  /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/,
);

export interface CallOptions {
  /** Sent as JSON (with its content-type) when given. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** The signed-in portal of one test file; its fields are set once `useSignedInPortal`'s beforeAll has run. */
export class SignedInApi implements SignedInPortal {
  ts!: Platform;
  portal!: PortalHandle;
  acme!: TestTenant;
  /** acme's Account Admin, signed in to the portal. */
  admin!: PortalSession;

  /** fetch of the portal's /api/v1`path`, as given. */
  api(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.portal.url}/api/v1${path}`, init);
  }

  /** A call as `session` (its cookie and CSRF header), or with no session only `headers`. */
  call(
    session: PortalSession | undefined,
    method: string,
    path: string,
    { body, headers = {} }: CallOptions = {},
  ): Promise<Response> {
    return this.api(path, {
      method,
      headers: {
        ...(session ? session.headers() : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  asAdminSession(method: string, path: string, body?: unknown): Promise<Response> {
    return this.call(this.admin, method, path, { body });
  }

  asBearer(token: string, method: string, path: string, body?: unknown): Promise<Response> {
    return this.call(undefined, method, path, {
      body,
      headers: { authorization: `Bearer ${token}` },
    });
  }

  /** Creates a service account named `uniqueName(prefix)` as the admin; its answer, secret included. */
  async createAccount(prefix: string): Promise<Record<string, string>> {
    const res = await this.asAdminSession('POST', '/service-accounts', {
      name: uniqueName(prefix),
    });
    // A test that goes on with an answer that is not the account fails far from the cause.
    if (res.status !== 201)
      throw new Error(`creating ${prefix}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  }

  /** The newest 100 audit events `session` may read. */
  async auditEvents(session: PortalSession = this.admin): Promise<Array<Record<string, unknown>>> {
    const res = await this.api('/audit-events?limit=100', { headers: session.headers() });
    expect(res.status).toBe(200);
    return (await res.json()) as Array<Record<string, unknown>>;
  }
}

/** Starts the token service and the portal and signs acme's admin in before the file's tests; stops them after. */
export function useSignedInPortal(options: PortalOptions = {}): SignedInApi {
  const api = new SignedInApi();
  beforeAll(async () => {
    Object.assign(api, await startSignedInPortal(options));
  }, 60_000);
  afterAll(async () => {
    await api.portal?.stop();
    await api.ts?.close();
  });
  return api;
}
