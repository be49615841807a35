/**
 * Least privilege on the token service's internal API, against the processes: the credential a
 * Plant Store holds reads what verifying tokens needs and nothing else, so whoever takes a Plant
 * Store pod cannot manage any tenant's service accounts. Every route of the internal route table
 * (read as data, so a route added later is covered) is called with every credential.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Route } from '@plant/shared/http';
import { assertionGrantBody, clientAssertion, clientKeyPair } from '@plant/test-kit';
import {
  httpRequest,
  startPlatformWithEditor,
  type Answer,
  type Platform,
  type ServiceAccount,
} from '../src/index.js';
import { routeKey, serviceApps } from './helpers/service-apps.js';

/** What a resource server needs (the keys are open to anyone): nothing else is its to call. */
const RESOURCE_SERVER_ROUTES = new Set([
  'GET /internal/v1/realms',
  'GET /internal/v1/revocations',
  'GET /internal/v1/revocations/changes',
  'GET /internal/v1/realms/:tenant/principals/:sub',
]);
const OPEN_ROUTES = new Set(['GET /internal/v1/realms/:tenant/jwks']);

let p: Platform;
let tenant: string;
let account: ServiceAccount;
let plantStoreToken: string;
let accountAdminToken: string;
const routes: readonly Route[] = serviceApps().find((app) => app.name === 'token-service internal')!
  .app.routes;

beforeAll(async () => {
  ({ p, tenant, account } = await startPlatformWithEditor('scope', { plantStores: 1 }));
  // The very values the processes were started with.
  plantStoreToken = p.envOf('plant-store').INTERNAL_API_TOKEN!;
  accountAdminToken = p.envOf('account-admin').INTERNAL_API_TOKEN!;
}, 60_000);

afterAll(() => p?.close());

function call(
  method: string,
  path: string,
  authorization: string | undefined,
  body?: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(authorization === undefined ? {} : { authorization }),
  };
  return httpRequest(`${p.internalUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

function pathOf(route: Route): string {
  const values: Record<string, string> = {
    tenant,
    client_id: account.clientId,
    id: account.clientId,
    sub: account.clientId,
    key_id: 'no-such-key',
    trust_id: 'no-such-trust',
  };
  return route.path.replace(
    /:([A-Za-z_]+)/g,
    (_m, name: string) => values[name] ?? `no-value-for-${name}`,
  );
}

/** What a refused caller could have changed: the tenant's accounts and the key its tokens are signed with. */
async function accountsNow(): Promise<unknown> {
  const list = await p.internal('GET', `/internal/v1/realms/${tenant}/service-accounts`);
  const signing = await p.internal('GET', `/internal/v1/realms/${tenant}/signing-algorithm`);
  expect([list.status, signing.status]).toEqual([200, 200]);
  return {
    accounts: (list.body as Array<Record<string, unknown>>).map(
      ({ last_used_at: _ignored, ...rest }) => rest,
    ),
    signing: signing.body,
  };
}

/** A body each writing route would take from its own caller. */
function bodyOf(method: string): unknown {
  if (method === 'PUT') return { alg: 'ES256' };
  return method === 'POST' || method === 'PATCH'
    ? { name: 'taken-over', role: 'Edit', actor: 'attacker' }
    : undefined;
}

describe("The Plant Store's credential on the internal API", () => {
  test("When the Plant Store's INTERNAL_API_TOKEN creates a service account, then 403 in the Error shape and nothing is created", async () => {
    const before = await accountsNow();

    const res = await call(
      'POST',
      `/internal/v1/realms/${tenant}/service-accounts`,
      `Bearer ${plantStoreToken}`,
      { name: 'taken-over', actor: 'attacker' },
    );

    expect({ status: res.status, body: res.body }).toEqual({
      status: 403,
      body: { error: 403, message: 'This credential may not call this route' },
    });
    expect(await accountsNow()).toEqual(before);
  });

  test("When the Plant Store's INTERNAL_API_TOKEN adds its own key or trusted workload to a service account, then 403 each, and an assertion signed with that key gets no token", async () => {
    const attacker = clientKeyPair('ec');
    const base = `/internal/v1/realms/${tenant}/service-accounts/${account.clientId}`;

    const key = await call('POST', `${base}/keys`, `Bearer ${plantStoreToken}`, {
      jwk: { ...attacker.publicJwk, kid: 'attacker' },
    });
    const trust = await call('POST', `${base}/trusts`, `Bearer ${plantStoreToken}`, {
      issuer: 'https://attacker.example',
      subject: 'me',
      audience: 'x',
    });
    const assertion = clientAssertion({
      clientId: account.clientId,
      audience: `${p.authUrl}/realms/${tenant}`,
      key: attacker,
      kid: 'attacker',
    });
    const grant = await httpRequest(`${p.authUrl}/realms/${tenant}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: assertionGrantBody(account.clientId, assertion),
    });

    expect([key.status, trust.status, grant.status]).toEqual([403, 403, 401]);
    expect((await p.internal('GET', `${base}/credentials`)).body).toMatchObject({
      keys: [],
      trusts: [],
    });
  });

  const callers: Array<[string, () => string | undefined, 401 | 403]> = [
    ['the Plant Store', () => `Bearer ${plantStoreToken}`, 403],
    ['a wrong token', () => 'Bearer not-any-internal-token-0123456789', 401],
    ['no token', () => undefined, 401],
  ];
  test.each(callers)(
    'When %s calls every route of the internal API, then only its own routes answer and nothing changes',
    async (_caller, authorization, refused) => {
      const before = await accountsNow();
      const answers: string[] = [];
      const wanted: string[] = [];

      for (const route of routes) {
        const key = routeKey(route);
        const res = await call(route.method, pathOf(route), authorization(), bodyOf(route.method));
        const allowed =
          OPEN_ROUTES.has(key) || (refused === 403 && RESOURCE_SERVER_ROUTES.has(key));
        answers.push(
          `${key}: ${res.status === 401 || res.status === 403 ? JSON.stringify(res.body) : 'answered'}`,
        );
        const message =
          refused === 401
            ? 'A valid internal API token is required'
            : 'This credential may not call this route';
        wanted.push(
          `${key}: ${allowed ? 'answered' : JSON.stringify({ error: refused, message })}`,
        );
      }

      expect(answers).toEqual(wanted);
      expect(await accountsNow()).toEqual(before);
      expect((await p.requestToken(tenant, account.clientId, account.secret)).status).toBe(200);
    },
  );

  test("When account-admin's credential calls every route, then every one answers (its credential reaches them all)", async () => {
    const answers = [];
    for (const route of routes.filter((r) => r.method === 'GET')) {
      const res = await call('GET', pathOf(route), `Bearer ${accountAdminToken}`);
      answers.push(
        `${routeKey(route)}: ${res.status === 401 || res.status === 403 ? res.status : 'answered'}`,
      );
    }

    expect(answers).toEqual(
      routes.filter((r) => r.method === 'GET').map((r) => `${routeKey(r)}: answered`),
    );
    expect(routes.length).toBeGreaterThanOrEqual(15);
  });

  test("When the Plant Store's credential switches the realm to ES256, then 403 and the realm keeps signing RS256 with its key", async () => {
    const before = await accountsNow();

    const res = await call(
      'PUT',
      `/internal/v1/realms/${tenant}/signing-algorithm`,
      `Bearer ${plantStoreToken}`,
      { alg: 'ES256' },
    );
    const token = await p.grantToken(tenant, account);

    expect({ status: res.status, body: res.body }).toEqual({
      status: 403,
      body: { error: 403, message: 'This credential may not call this route' },
    });
    expect(await accountsNow()).toEqual(before);
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())).toMatchObject({
      alg: 'RS256',
    });
  });

  test('With its narrowed credential the Plant Store still verifies tokens and serves plants', async () => {
    const token = await p.grantToken(tenant, account);

    expect((await p.listPlants(token)).status).toBe(200);
  });
});
