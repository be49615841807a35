/**
 * Token introspection (RFC 7662) at `{issuer}/protocol/openid-connect/token/introspect`: who may
 * ask (a resource server's credential), what an active token says, and `active: false` as soon
 * as the principal is reset, deleted or demoted (the versioned revocation, through Redis).
 */
import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { dpopKey, eventually } from '@plant/test-kit';
import {
  basic,
  decodeJwt,
  TEST_ENV,
  uniqueIp,
  useHarness,
  type Harness,
} from './helpers/harness.js';
import { internal, type CreatedAccount } from './helpers/internal-client.js';
import { tokenRequest } from './helpers/token-client.js';

let h: Harness;
let tenant: string;
let api: ReturnType<typeof internal>;

useHarness((started, first) => {
  h = started;
  tenant = first;
  api = internal(h);
});

const [PLANT_STORE_CREDENTIAL] = TEST_ENV.RESOURCE_SERVER_TOKENS.split(',');
const path = (realm = tenant) => `/realms/${realm}/protocol/openid-connect/token/introspect`;

/** `credential: null` sends none. */
function introspect(
  token: string,
  {
    realm = tenant,
    credential = PLANT_STORE_CREDENTIAL,
    ip = uniqueIp(),
  }: { realm?: string; credential?: string | null; ip?: string } = {},
) {
  const req = request(h.publicUrl).post(path(realm)).set('x-forwarded-for', ip).type('form');
  if (credential !== null) req.set('authorization', `Bearer ${credential}`);
  return req.send({ token });
}

async function tokenOf(account: CreatedAccount, proof?: string): Promise<string> {
  const req = tokenRequest(h, tenant)
    .set('authorization', basic(account.client_id, account.secret))
    .type('form');
  if (proof !== undefined) req.set('dpop', proof);
  const res = await req.send({ grant_type: 'client_credentials' });
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

const active = async (token: string, realm = tenant) =>
  (await introspect(token, { realm })).body.active as boolean;

describe('Introspection: answers', () => {
  test('When a resource server introspects a live token, then 200 no-store with active true, every claim of the token and token_type Bearer', async () => {
    const account = await api.createServiceAccount(tenant);
    const token = await tokenOf(account);
    const res = await introspect(token);
    expect({ status: res.status, cache: res.headers['cache-control'], body: res.body }).toEqual({
      status: 200,
      cache: 'no-store',
      body: { ...decodeJwt(token).payload, active: true, token_type: 'Bearer' },
    });
    expect(res.body).toMatchObject({
      sub: account.client_id,
      client_id: account.client_id,
      scope: 'plants:read',
      iss: h.issuer(tenant),
      aud: TEST_ENV.PLANT_STORE_AUDIENCE,
    });
  });

  test('When the token is DPoP-bound, then token_type is DPoP and cnf.jkt names the key (the caller checks the proof)', async () => {
    const account = await api.createServiceAccount(tenant);
    const key = dpopKey();
    const token = await tokenOf(
      account,
      key.proof({ htm: 'POST', htu: `${h.publicUrl}${h.tokenUrl(tenant)}` }),
    );
    expect((await introspect(token)).body).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt: key.thumbprint },
    });
  });

  test.each<[string, () => Promise<string>]>([
    ['garbage', async () => 'not-a-token'],
    [
      'a token signed by someone else',
      async () => {
        const real = await tokenOf(await api.createServiceAccount(tenant));
        const [header, payload] = real.split('.');
        return `${header}.${payload}.${Buffer.from('forged').toString('base64url')}`;
      },
    ],
    ['a 10,000-character token', async () => 'a'.repeat(10_000)],
  ])('When the token is %s, then active false and nothing else', async (_case, token) => {
    expect((await introspect(await token())).body).toEqual({ active: false });
  });

  test("When a token of this realm is introspected at another tenant's endpoint (an existing realm or none), then active false", async () => {
    const other = (await h.createTenant()).tenant;
    const token = await tokenOf(await api.createServiceAccount(tenant));
    expect(await active(token, other)).toBe(false);
    expect(await active(token, 'no-such-realm-here')).toBe(false);
    expect(await active(token)).toBe(true);
  });

  test('When the realm name is not a realm name, then 404 in the Error shape', async () => {
    const res = await introspect('x', { realm: 'NOT_A_REALM' });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 404,
      body: { error: 404, message: 'Realm not found' },
    });
  });
});

describe('Introspection: the revocation reaches it', () => {
  test.each<[string, (account: CreatedAccount) => Promise<unknown>]>([
    ['its secret is reset', (a) => api.reset(tenant, a.client_id)],
    ['it is deleted', (a) => api.remove(tenant, a.client_id)],
    ['it is demoted (Edit to View)', (a) => api.patch(tenant, a.client_id, { role: 'View' })],
    [
      'it is set to require DPoP',
      (a) => api.patch(tenant, a.client_id, { dpop_bound_access_tokens: true }),
    ],
  ])(
    'When the account is active and then %s, then its earlier token turns active false at once, and a new token is active',
    async (_case, change) => {
      const account = await api.createServiceAccount(tenant);
      await api.patch(tenant, account.client_id, { role: 'Edit' });
      const token = await tokenOf(account);
      expect(await active(token)).toBe(true);
      await change(account);
      // The event travels through Redis like the Plant Store's; a few milliseconds, polled for at most 2 s.
      await eventually(
        async () => !(await active(token)),
        'token inactive after the change',
        2_000,
      );
    },
  );
});

describe('Introspection: the caller', () => {
  test('When there is no credential, then 401 with a bare Bearer challenge in the Error shape', async () => {
    const res = await introspect('x', { credential: null });
    expect({
      status: res.status,
      challenge: res.headers['www-authenticate'],
      body: res.body.error,
    }).toEqual({ status: 401, challenge: 'Bearer realm="token-introspection"', body: 401 });
  });

  test("When the credential is wrong, a service account's secret, or sent as Basic, then 401 invalid_token", async () => {
    const account = await api.createServiceAccount(tenant);
    for (const authorization of [
      `Bearer wrong-${Date.now()}`,
      `Bearer ${account.secret}`,
      basic(account.client_id, account.secret),
    ]) {
      const res = await request(h.publicUrl)
        .post(path())
        .set('x-forwarded-for', uniqueIp())
        .set('authorization', authorization)
        .type('form')
        .send({ token: 'x' });
      expect({
        authorization: authorization.slice(0, 6),
        status: res.status,
        body: res.body.error,
      }).toEqual({ authorization: authorization.slice(0, 6), status: 401, body: 401 });
    }
  });

  test("When account-admin's credential or another resource server's is used, then each may introspect", async () => {
    const token = await tokenOf(await api.createServiceAccount(tenant));
    for (const credential of [
      TEST_ENV.ACCOUNT_ADMIN_TOKEN,
      TEST_ENV.RESOURCE_SERVER_TOKENS.split(',')[1],
    ])
      expect((await introspect(token, { credential })).body.active).toBe(true);
  });

  test('When the body is not a form, lacks token, or repeats it, then 415 or 400 in the Error shape', async () => {
    const auth = `Bearer ${PLANT_STORE_CREDENTIAL}`;
    const json = await request(h.publicUrl)
      .post(path())
      .set('authorization', auth)
      .send({ token: 'x' });
    const missing = await request(h.publicUrl)
      .post(path())
      .set('authorization', auth)
      .type('form')
      .send('token_type_hint=access_token');
    const repeated = await request(h.publicUrl)
      .post(path())
      .set('authorization', auth)
      .type('form')
      .send('token=a&token=b');
    const huge = await request(h.publicUrl)
      .post(path())
      .set('authorization', auth)
      .type('form')
      .send(`token=${'a'.repeat(20_000)}`);
    expect([json, missing, repeated, huge].map((r) => [r.status, r.body.error])).toEqual([
      [415, 415],
      [400, 400],
      [400, 400],
      [413, 413],
    ]);
  });

  test('When one address sends more wrong credentials than its budget, then they get 429 with Retry-After, and the right credential from it still passes', async () => {
    const ip = uniqueIp();
    const statuses: number[] = [];
    for (let i = 0; i < 55; i += 1)
      statuses.push((await introspect('x', { credential: `guess-${i}`, ip })).status);
    expect({
      first: statuses.slice(0, 50).every((s) => s === 401),
      last: statuses.slice(50),
    }).toEqual({ first: true, last: [429, 429, 429, 429, 429] });
    const right = await introspect('x', { ip });
    expect({ status: right.status, body: right.body }).toEqual({
      status: 200,
      body: { active: false },
    });
  });

  test('When 60 introspections arrive at once, then every answer is the same active true', async () => {
    const token = await tokenOf(await api.createServiceAccount(tenant));
    const answers = await Promise.all(
      Array.from({ length: 60 }, () =>
        introspect(token).then((r) => `${r.status} ${r.body.active}`),
      ),
    );
    expect(new Set(answers)).toEqual(new Set(['200 true']));
  });
});
