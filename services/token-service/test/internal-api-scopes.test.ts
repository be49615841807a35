import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { secretKeysOf, secretValuesOf } from '@plant/shared/config';
import type { Route } from '@plant/shared/http';
import { clientKeyPair } from '@plant/test-kit';
import request from 'supertest';
import { configShape, loadTokenServiceConfig } from '../src/config.js';
import { startHarness, TEST_ENV, type Harness } from './helpers/harness.js';
import { internal, type CreatedAccount } from './helpers/internal-client.js';

/**
 * Least privilege on the internal API, walked over the route table as data: a route added later
 * is covered without touching this file, and is account-admin's alone until it is named below.
 */
const [PLANT_STORE_TOKEN, OTHER_RESOURCE_SERVER_TOKEN] = TEST_ENV.RESOURCE_SERVER_TOKENS.split(
  ',',
) as [string, string];
const ACCOUNT_ADMIN_TOKEN = TEST_ENV.ACCOUNT_ADMIN_TOKEN;

/** What a resource server needs to verify tokens (the keys are open): nothing else. */
const RESOURCE_SERVER_ROUTES = new Set([
  'GET /internal/v1/realms',
  'GET /internal/v1/revocations',
  'GET /internal/v1/revocations/changes',
  'GET /internal/v1/realms/:tenant/principals/:sub',
]);
const OPEN_ROUTES = new Set(['GET /internal/v1/realms/:tenant/jwks']);

type Caller =
  | 'resource server'
  | 'other resource server'
  | 'account-admin'
  | 'wrong token'
  | 'no token'
  | 'admin token with another scheme'
  | 'admin token plus a suffix';
const CALLERS: Array<[Caller, string | undefined]> = [
  ['resource server', `Bearer ${PLANT_STORE_TOKEN}`],
  ['other resource server', `Bearer ${OTHER_RESOURCE_SERVER_TOKEN}`],
  ['account-admin', `Bearer ${ACCOUNT_ADMIN_TOKEN}`],
  ['wrong token', 'Bearer wrong-token-0123456789abcdef'],
  ['no token', undefined],
  ['admin token with another scheme', `Basic ${ACCOUNT_ADMIN_TOKEN}`],
  ['admin token plus a suffix', `Bearer ${ACCOUNT_ADMIN_TOKEN}x`],
];

/** The answer each caller must get from a route: passes authorization, 403 (known, out of scope), 401 (unknown). */
function expected(caller: Caller, route: Route): 'pass' | 403 | 401 {
  const key = `${route.method} ${route.path}`;
  if (OPEN_ROUTES.has(key)) return 'pass';
  if (caller === 'account-admin') return 'pass';
  if (caller === 'resource server' || caller === 'other resource server')
    return RESOURCE_SERVER_ROUTES.has(key) ? 'pass' : 403;
  return 401;
}

let h: Harness;
let tenant: string;
let account: CreatedAccount;
let userId: string;
let firstKid: string;
let keyId: string;
let trustId: string;
let routes: readonly Route[];

beforeAll(async () => {
  h = await startHarness();
  ({ tenant, kid: firstKid } = await h.createTenant());
  account = await internal(h).createServiceAccount(tenant);
  userId = (await h.createUser(tenant, 'View')).id;
  keyId = (
    await internal(h)
      .addKey(tenant, account.client_id, { jwk: clientKeyPair('ec').publicJwk })
      .expect(201)
  ).body.id;
  trustId = (
    await internal(h)
      .addTrust(tenant, account.client_id, {
        issuer: 'https://ci.example',
        subject: 'repo:acme/app',
        audience: h.issuer(tenant),
      })
      .expect(201)
  ).body.id;
  routes = h.service.internalApp.routes;
});

afterAll(async () => {
  await h.close();
});

function urlOf(route: Route): string {
  const values: Record<string, string> = {
    tenant,
    client_id: account.client_id,
    id: userId,
    sub: account.client_id,
    key_id: keyId,
    trust_id: trustId,
    secret_id: 'sec-0000000000000000',
    factor_id: '00000000-0000-4000-8000-000000000000',
  };
  return route.path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
    if (values[name] === undefined)
      throw new Error(`No value for :${name} of ${route.path}: add one here`);
    return values[name];
  });
}

async function call(route: Route, method: string, authorization: string | undefined) {
  const agent = request(h.internalUrl);
  const req = agent[method.toLowerCase() as 'get'](urlOf(route));
  if (authorization !== undefined) req.set('authorization', authorization);
  if (method === 'POST' || method === 'PATCH')
    req.send({ name: `scoped-${Math.random().toString(36).slice(2, 10)}`, actor: 'scope-test' });
  // A valid body: a refused caller must be refused for its credential, not for its input.
  if (method === 'PUT')
    req.send(
      route.path.endsWith('/factor-policy') ? { require_admin_factor: false } : { alg: 'ES256' },
    );
  return req;
}

/** Every route, and HEAD for each GET (express serves it with the GET route's handlers). */
function requests(): Array<[Route, string]> {
  return routes.flatMap(
    (route): Array<[Route, string]> =>
      route.method === 'GET'
        ? [
            [route, 'GET'],
            [route, 'HEAD'],
          ]
        : [[route, route.method]],
  );
}

describe('least privilege on the internal API', () => {
  test('The walk reads the internal route table, so every route is in it', () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);

    expect(keys).toEqual(
      expect.arrayContaining([
        ...RESOURCE_SERVER_ROUTES,
        ...OPEN_ROUTES,
        'POST /internal/v1/realms/:tenant/service-accounts',
        'DELETE /internal/v1/realms/:tenant/service-accounts/:client_id',
        // Which algorithm a realm signs with decides which resource servers can verify it: account-admin's alone.
        'GET /internal/v1/realms/:tenant/signing-algorithm',
        'PUT /internal/v1/realms/:tenant/signing-algorithm',
      ]),
    );
    expect(keys.length).toBeGreaterThanOrEqual(15);
  });

  // Callers that must be refused go first: what they tried must have changed nothing for the admin's calls to find.
  test.each(CALLERS.filter(([caller]) => caller !== 'account-admin'))(
    'When %s calls every route, then exactly its routes pass and the others are refused in the Error shape',
    async (caller, authorization) => {
      const answers: string[] = [];
      const wanted: string[] = [];
      for (const [route, method] of requests()) {
        const res = await call(route, method, authorization);
        const want = expected(caller, route);
        const got = res.status === 401 || res.status === 403 ? res.status : 'pass';
        answers.push(`${method} ${route.path}: ${got}`);
        wanted.push(`${method} ${route.path}: ${want}`);
        if (got !== 'pass' && method !== 'HEAD') {
          const message =
            got === 401
              ? 'A valid internal API token is required'
              : 'This credential may not call this route';
          expect({ route: `${method} ${route.path}`, body: res.body }).toEqual({
            route: `${method} ${route.path}`,
            body: { error: got, message },
          });
        }
        if (got === 401)
          expect(res.headers['www-authenticate']).toBe('Bearer realm="token-service-internal"');
      }

      expect(answers).toEqual(wanted);
    },
  );

  test("When a resource server's credential adds its own key or trust to an account, or disables it, then 403 and the account's credentials are as they were (no takeover by a Plant Store pod)", async () => {
    const attacker = clientKeyPair('ec');
    const base = `/internal/v1/realms/${tenant}/service-accounts/${account.client_id}`;
    const as = (method: 'post' | 'delete', path: string) =>
      request(h.internalUrl)
        [method](`${base}${path}`)
        .set('authorization', `Bearer ${PLANT_STORE_TOKEN}`);

    const answers = [
      (await as('post', '/keys').send({ jwk: attacker.publicJwk })).status,
      (
        await as('post', '/trusts').send({
          issuer: 'https://attacker.example',
          subject: 'me',
          audience: 'x',
        })
      ).status,
      (await as('post', '/disable').send({})).status,
      (await as('delete', '/secret')).status,
    ];
    const credentials = (await internal(h).credentials(tenant, account.client_id).expect(200)).body;

    expect(answers).toEqual([403, 403, 403, 403]);
    expect({
      keys: credentials.keys.map((k: { id: string }) => k.id),
      trusts: credentials.trusts.map((t: { id: string }) => t.id),
      secret: credentials.secret !== null,
      disabled: credentials.disabled,
    }).toEqual({
      keys: [keyId],
      trusts: [trustId],
      secret: true,
      disabled: false,
    });
  });

  test('What the refused callers sent changed nothing: the account, its name and its secret are as they were, no account was added, the realm signs RS256 with its first key', async () => {
    const admin = { authorization: `Bearer ${ACCOUNT_ADMIN_TOKEN}` };
    const signing = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/signing-algorithm`)
      .set(admin);
    expect(signing.body).toEqual({ tenant, alg: 'RS256', kid: firstKid });

    const list = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/service-accounts`)
      .set(admin);
    const grant = await request(h.publicUrl).post(h.tokenUrl(tenant)).type('form').send({
      grant_type: 'client_credentials',
      client_id: account.client_id,
      client_secret: account.secret,
    });

    expect(list.status).toBe(200);
    expect(
      (list.body as Array<{ client_id: string; name: string }>).map((a) => ({
        client_id: a.client_id,
        name: a.name,
      })),
    ).toEqual([{ client_id: account.client_id, name: account.name }]);
    expect(grant.status).toBe(200);
  });

  test('When account-admin calls every route, then every one passes authorization', async () => {
    const answers: string[] = [];
    const wanted: string[] = [];
    for (const [route, method] of requests()) {
      const res = await call(route, method, `Bearer ${ACCOUNT_ADMIN_TOKEN}`);
      answers.push(
        `${method} ${route.path}: ${res.status === 401 || res.status === 403 ? res.status : 'pass'}`,
      );
      wanted.push(`${method} ${route.path}: pass`);
    }

    expect(answers).toEqual(wanted);
  });
});

describe('the internal credentials in the configuration', () => {
  const { INTERNAL_PORT: _p, ...base } = {
    ...TEST_ENV,
    AUTH_URL: 'http://auth.test',
    INTERNAL_PORT: '0',
  };

  test('When account-admin and a resource server are given the same token, then the configuration is refused, naming the variable', () => {
    expect(() =>
      loadTokenServiceConfig({
        ...base,
        RESOURCE_SERVER_TOKENS: `${PLANT_STORE_TOKEN},${ACCOUNT_ADMIN_TOKEN}`,
      }),
    ).toThrow(
      'configuration error: ACCOUNT_ADMIN_TOKEN must differ from every RESOURCE_SERVER_TOKENS value: each caller holds a credential of its own',
    );
  });

  test('When two resource servers are given the same token, then the configuration is refused', () => {
    expect(() =>
      loadTokenServiceConfig({
        ...base,
        RESOURCE_SERVER_TOKENS: `${PLANT_STORE_TOKEN}, ${PLANT_STORE_TOKEN}`,
      }),
    ).toThrow(
      'configuration error: RESOURCE_SERVER_TOKENS lists a token twice: each resource server holds a credential of its own',
    );
  });

  test.each([
    ['no token', ',,,,,,,,,,,,,,,,', 'lists no token'],
    [
      'a short token beside a long one',
      `${PLANT_STORE_TOKEN},short`,
      'holds a token shorter than 16 characters',
    ],
  ])(
    'When RESOURCE_SERVER_TOKENS holds %s, then the configuration is refused',
    (_what, value, detail) => {
      expect(() => loadTokenServiceConfig({ ...base, RESOURCE_SERVER_TOKENS: value })).toThrow(
        `configuration error: RESOURCE_SERVER_TOKENS ${detail}`,
      );
    },
  );

  test('Both credentials are secrets the production check applies to, each token of the list on its own', () => {
    expect(secretKeysOf(configShape)).toEqual(
      expect.arrayContaining(['RESOURCE_SERVER_TOKENS', 'ACCOUNT_ADMIN_TOKEN']),
    );
    expect(secretKeysOf(configShape)).not.toContain('INTERNAL_API_TOKEN');
    expect(
      secretValuesOf(configShape.RESOURCE_SERVER_TOKENS, 'a-token-of-sixteen, b-token-of-sixteen'),
    ).toEqual({ values: ['a-token-of-sixteen', 'b-token-of-sixteen'], shippedOnly: false });
  });
});
