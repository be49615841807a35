import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import request from 'supertest';
import { openApiValidator } from './helpers/openapi-validator.js';
import { startPlantStore, type PlantStoreHarness } from './helpers/plant-store-harness.js';

// RSA key generation per realm and real Postgres round trips: generous under a loaded machine.
jest.setTimeout(20_000);

let store: PlantStoreHarness;
let expectDocumented: Awaited<ReturnType<typeof openApiValidator>>;
let tenant: string;

beforeAll(async () => {
  store = await startPlantStore();
  expectDocumented = await openApiValidator(store.url);
  tenant = store.newTenant();
});

afterAll(async () => {
  await store.close();
});

let nextId = 1;
const post = async (
  authorization: string | undefined,
  body: Record<string, unknown> = { id: nextId++, name: 'Aloe' },
) => {
  const req = request(store.url).post('/plants').set('content-type', 'application/json');
  if (authorization !== undefined) req.set('authorization', authorization);
  const res = await req.send(JSON.stringify(body));
  expectDocumented('POST', '/plants', res);
  return res;
};
const list = async (authorization: string | undefined) => {
  const req = request(store.url).get('/plants');
  if (authorization !== undefined) req.set('authorization', authorization);
  const res = await req;
  expectDocumented('GET', '/plants', res);
  return res;
};

const invalid = (description: string) =>
  `Bearer realm="plants", error="invalid_token", error_description="${description}"`;

describe('Plant Store authentication', () => {
  test.each([
    ['GET', list],
    ['POST', post],
  ] as const)(
    'When %s /plants has no Authorization header, then 401 with a bare Bearer challenge',
    async (_m, call) => {
      const res = await call(undefined);
      expect({
        status: res.status,
        challenge: res.headers['www-authenticate'],
        body: res.body,
      }).toEqual({
        status: 401,
        challenge: 'Bearer realm="plants"',
        body: {
          error: 401,
          message: 'Authentication required: send Authorization: Bearer <access token>',
        },
      });
    },
  );

  test('When the Authorization header uses another scheme, then 401 with a bare Bearer challenge', async () => {
    const res = await list('Basic dXNlcjpwYXNz');
    expect({ status: res.status, challenge: res.headers['www-authenticate'] }).toEqual({
      status: 401,
      challenge: 'Bearer realm="plants"',
    });
  });

  test.each([
    ['a malformed token', () => 'Bearer not-a-jwt', 'Token is not a well-formed JWT'],
    [
      'an empty bearer value',
      () => 'Bearer ',
      'Authorization header must be Bearer followed by a token',
    ],
    [
      'an expired token',
      () => `Bearer ${store.issuer.mintExpired({ tenant })}`,
      'Token has expired',
    ],
    [
      'a token for another audience',
      () => `Bearer ${store.issuer.mint({ tenant, claims: { aud: 'http://account-admin.test' } })}`,
      'Token audience is not accepted',
    ],
    [
      'a token from another issuer',
      () =>
        `Bearer ${store.issuer.mint({ tenant, claims: { iss: `http://evil.test/realms/${tenant}` } })}`,
      'Token issuer is not accepted',
    ],
    [
      'a token without typ at+jwt',
      () => `Bearer ${store.issuer.mint({ tenant, header: { typ: 'JWT' } })}`,
      'Token type must be at+jwt',
    ],
    [
      'an alg none token',
      () => `Bearer ${store.issuer.mintAlgNone({ tenant })}`,
      'Token algorithm must be RS256 or ES256',
    ],
    [
      'an HS256 token signed with the public key',
      () => `Bearer ${store.issuer.mintHs256WithPublicKey({ tenant })}`,
      'Token algorithm must be RS256 or ES256',
    ],
    [
      'a token signed by another key',
      () => `Bearer ${store.issuer.mintWithOtherKey({ tenant })}`,
      'Token signature is invalid',
    ],
    [
      'a token of an unknown realm',
      () => `Bearer ${store.issuer.mint({ tenant: 'no-such-realm' })}`,
      'Token issuer is not a known realm',
    ],
  ])(
    'When the request carries %s, then 401 invalid_token',
    async (_case, authorization, description) => {
      const auth = authorization();
      for (const call of [list, post]) {
        const res = await call(auth);
        expect({
          status: res.status,
          challenge: res.headers['www-authenticate'],
          body: res.body,
        }).toEqual({
          status: 401,
          challenge: invalid(description),
          body: { error: 401, message: description },
        });
      }
    },
  );

  test('When a token of tenant A claims tenant B, then it is refused and nothing is written to B', async () => {
    const b = store.newTenant();
    const forged = store.issuer.mint({
      tenant,
      claims: { tenant: b, iss: store.issuer.issuerOf(b) },
    });
    const res = await post(`Bearer ${forged}`, { id: 1, name: 'forged' });
    expect({ status: res.status, challenge: res.headers['www-authenticate'] }).toEqual({
      status: 401,
      challenge: invalid('Token signing key is not known'),
    });
    expect(await list(`Bearer ${store.token(b)}`)).toMatchObject({ status: 200, body: [] });
  });
});

describe('Plant Store authorization', () => {
  test.each([['View'], ['Edit'], ['Account Admin']])(
    'When a %s principal lists plants, then 200',
    async (role) => {
      const res = await list(`Bearer ${store.token(tenant, { role })}`);
      expect(res.status).toBe(200);
    },
  );

  test('When a View principal creates a plant, then 403 insufficient_scope and nothing is stored', async () => {
    const own = store.newTenant();
    const res = await post(`Bearer ${store.token(own, { role: 'View' })}`, {
      id: 1,
      name: 'Cactus',
      tag: 'succulent',
    });
    const message = 'Creating a plant needs the Edit role or an edit grant on its tag';
    expect({
      status: res.status,
      challenge: res.headers['www-authenticate'],
      body: res.body,
    }).toEqual({
      status: 403,
      challenge: `Bearer realm="plants", error="insufficient_scope", error_description="${message}"`,
      body: { error: 403, message },
    });
    expect((await list(`Bearer ${store.token(own)}`)).body).toEqual([]);
  });

  test.each([['Edit'], ['Account Admin']])(
    'When a %s principal creates a plant, then 200',
    async (role) => {
      const res = await post(`Bearer ${store.token(tenant, { role })}`, {
        id: nextId++,
        name: 'Ivy',
        tag: 'climber',
      });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 200,
        body: { name: 'Ivy', tag: 'climber' },
      });
    },
  );

  test('When a View principal with an edit grant on a tag creates a plant of that tag, then 200', async () => {
    const bearer = `Bearer ${store.token(tenant, { role: 'View', grants: [{ tag: 'succulent', permission: 'edit' }] })}`;
    const res = await post(bearer, { id: nextId++, name: 'Echeveria', tag: 'succulent' });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: { name: 'Echeveria', tag: 'succulent' },
    });
  });

  test.each([
    ['another tag', { tag: 'fern' }],
    ['no tag', {}],
    ['a tag differing in case', { tag: 'Succulent' }],
  ])(
    'When a View principal with a grant on "succulent" creates a plant with %s, then 403',
    async (_case, extra) => {
      const bearer = `Bearer ${store.token(tenant, { role: 'View', grants: [{ tag: 'succulent', permission: 'edit' }] })}`;
      const res = await post(bearer, { id: nextId++, name: 'Other', ...extra });
      expect(res.status).toBe(403);
      expect(res.headers['www-authenticate']).toMatch(
        /^Bearer realm="plants", error="insufficient_scope"/,
      );
      expect(res.body).toEqual({ error: 403, message: expect.any(String) });
    },
  );
});

describe('Plant Store scope', () => {
  const narrowed = "Creating a plant needs the plants:write scope; the token's scope is narrower";

  test("When an Edit principal's token is narrowed to plants:read, then it lists but creating is 403 insufficient_scope and nothing is stored", async () => {
    const own = store.newTenant();
    const bearer = `Bearer ${store.token(own, { role: 'Edit', scope: 'plants:read' })}`;
    const res = await post(bearer, { id: 1, name: 'Monstera' });
    expect({
      status: res.status,
      challenge: res.headers['www-authenticate'],
      body: res.body,
    }).toEqual({
      status: 403,
      challenge: `Bearer realm="plants", error="insufficient_scope", error_description="${narrowed}"`,
      body: { error: 403, message: narrowed },
    });
    expect(await list(bearer)).toMatchObject({ status: 200, body: [] });
  });

  test("When an Edit principal's token carries plants:read plants:write, then it creates", async () => {
    const res = await post(
      `Bearer ${store.token(tenant, { role: 'Edit', scope: 'plants:read plants:write' })}`,
      { id: nextId++, name: 'Ivy' },
    );
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { name: 'Ivy' } });
  });

  test('When a View principal with an edit grant on a tag has a plants:read token, then creating a plant of that tag is 403 and nothing is stored', async () => {
    const own = store.newTenant();
    const bearer = `Bearer ${store.token(own, { role: 'View', grants: [{ tag: 'succulent', permission: 'edit' }], scope: 'plants:read' })}`;
    const res = await post(bearer, { id: 1, name: 'Echeveria', tag: 'succulent' });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 403,
      body: { error: 403, message: narrowed },
    });
    expect((await list(`Bearer ${store.token(own)}`)).body).toEqual([]);
  });

  test.each([
    ['plants:write only', 'plants:write'],
    ['an empty scope', ''],
    ['a scope of another API', 'openid email profile'],
  ])(
    'When a token carries %s, then listing plants is 403 insufficient_scope',
    async (_case, scope) => {
      const res = await list(`Bearer ${store.token(tenant, { role: 'Edit', scope })}`);
      const message = "Listing plants needs the plants:read scope; the token's scope is narrower";
      expect({
        status: res.status,
        challenge: res.headers['www-authenticate'],
        body: res.body,
      }).toEqual({
        status: 403,
        challenge: `Bearer realm="plants", error="insufficient_scope", error_description="${message}"`,
        body: { error: 403, message },
      });
    },
  );

  test('When a plants:write-only token of an Edit principal creates, then 200 (writing does not need reading)', async () => {
    const res = await post(
      `Bearer ${store.token(tenant, { role: 'Edit', scope: 'plants:write' })}`,
      { id: nextId++, name: 'Fern' },
    );
    expect(res.status).toBe(200);
  });
});

describe('Tenant isolation', () => {
  test("When tenants A and B hold plants, then a token of A never sees B's plants and ids do not collide", async () => {
    const a = store.newTenant();
    const b = store.newTenant();
    for (const id of [1, 2, 3]) {
      expect((await post(`Bearer ${store.token(a)}`, { id, name: `a${id}` })).status).toBe(200);
      expect((await post(`Bearer ${store.token(b)}`, { id, name: `b${id}` })).status).toBe(200);
    }
    expect((await list(`Bearer ${store.token(a)}`)).body).toEqual([
      { name: 'a1' },
      { name: 'a2' },
      { name: 'a3' },
    ]);
    expect((await list(`Bearer ${store.token(b)}`)).body).toEqual([
      { name: 'b1' },
      { name: 'b2' },
      { name: 'b3' },
    ]);
  });
});

describe('Secrets', () => {
  test('When requests carry bearer tokens (valid and invalid), then no token appears in the logs', async () => {
    const valid = store.token(tenant);
    const expired = store.issuer.mintExpired({ tenant });
    await list(`Bearer ${valid}`);
    await post(`Bearer ${valid}`, { id: nextId++, name: 'Logged?' });
    await list(`Bearer ${expired}`);
    await list('Bearer not-a-jwt');
    const logs = store.logs.join('\n');
    expect(logs).toContain('request completed');
    for (const secret of [
      valid,
      expired,
      valid.split('.')[2]!,
      expired.split('.')[2]!,
      'not-a-jwt',
    ])
      expect(logs).not.toContain(secret);
  });
});
