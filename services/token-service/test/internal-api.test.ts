import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { useHarness, type Harness } from './helpers/harness.js';
import { AUTH, internal } from './helpers/internal-client.js';

let h: Harness;
let tenant: string;
let api: ReturnType<typeof internal>;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

useHarness((started, first) => {
  h = started;
  tenant = first;
  api = internal(h);
});

describe('authentication of the internal API', () => {
  test.each([
    ['no Authorization header', undefined],
    ['a wrong token', 'Bearer wrong-token'],
    ['the right token with another scheme', 'Basic dGVzdC1pbnRlcm5hbC10b2tlbi0wMTIzNDU2Nzg5'],
  ])('When a request carries %s, then 401 in the Error shape', async (_name, header) => {
    const req = request(h.internalUrl).get(`/internal/v1/realms/${tenant}/service-accounts`);
    if (header) req.set('authorization', header);

    const res = await req;

    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="token-service-internal"');
    expect(res.body).toEqual({ error: 401, message: 'A valid internal API token is required' });
  });

  test('When the JWKS is fetched without a token, then it is served (public keys only)', async () => {
    const res = await request(h.internalUrl).get(`/internal/v1/realms/${tenant}/jwks`);

    expect(res.status).toBe(200);
    expect(res.body.keys).toEqual([
      {
        kty: 'RSA',
        n: expect.any(String),
        e: 'AQAB',
        kid: expect.any(String),
        alg: 'RS256',
        use: 'sig',
      },
    ]);
  });

  test('When the JWKS of an unknown realm is asked for, then 404', async () => {
    const res = await request(h.internalUrl).get('/internal/v1/realms/no-such-realm-y/jwks');

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 404, message: 'Tenant not found' });
  });
});

describe('realms', () => {
  test('When a realm is asked for, then its name and creation time come back', async () => {
    const res = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}`)
      .set('authorization', AUTH);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tenant, created_at: expect.stringMatching(ISO) });
  });

  test('When an unknown realm is asked for, then 404', async () => {
    const res = await request(h.internalUrl)
      .get('/internal/v1/realms/no-such-realm-z')
      .set('authorization', AUTH);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 404, message: 'Tenant not found' });
  });

  test('When the realms are listed, then every realm is named once, in name order, and a realm created just now is among them', async () => {
    const { tenant: created } = await h.createTenant();

    const res = await request(h.internalUrl).get('/internal/v1/realms').set('authorization', AUTH);

    expect({
      status: res.status,
      cacheControl: res.headers['cache-control'],
      keys: Object.keys(res.body),
    }).toEqual({ status: 200, cacheControl: 'no-store', keys: ['realms'] });
    const names = res.body.realms as string[];
    expect(names.filter((name) => name === tenant || name === created)).toEqual(
      [tenant, created].sort(),
    );
    expect(names).toEqual([...new Set(names)].sort());
  });

  test.each([
    ['no Authorization header', undefined],
    ['a wrong token', 'Bearer wrong-token'],
  ])('When the realms are listed with %s, then 401 and no name is shown', async (_name, header) => {
    const req = request(h.internalUrl).get('/internal/v1/realms');
    if (header) req.set('authorization', header);

    const res = await req;

    expect({ status: res.status, body: res.body }).toEqual({
      status: 401,
      body: { error: 401, message: 'A valid internal API token is required' },
    });
  });

  test('When the realm list is written to, then 405 with Allow: GET, HEAD (HEAD is served)', async () => {
    const res = await request(h.internalUrl)
      .post('/internal/v1/realms')
      .set('authorization', AUTH)
      .send({});

    const head = await request(h.internalUrl)
      .head('/internal/v1/realms')
      .set('authorization', AUTH);

    expect({ status: res.status, allow: res.headers.allow }).toEqual({
      status: 405,
      allow: 'GET, HEAD',
    });
    expect(head.status).toBe(200);
  });
});
describe('revocation snapshot and principals', () => {
  test('When principals were changed or deleted, then the snapshot lists them with their versions and a full horizon to live, and untouched ones are absent', async () => {
    const changed = await api.createServiceAccount(tenant);
    const deleted = await api.createServiceAccount(tenant);
    const untouched = await api.createServiceAccount(tenant);
    await api.patch(tenant, changed.client_id, { role: 'Edit' }).expect(200);
    await api.reset(tenant, changed.client_id).expect(200);
    await api.remove(tenant, deleted.client_id).expect(204);

    const res = await request(h.internalUrl)
      .get('/internal/v1/revocations')
      .set('authorization', AUTH);

    expect(res.status).toBe(200);
    const mine = (res.body.entries as Array<{ sub: string; ttl: number }>).filter((e) =>
      [changed.client_id, deleted.client_id, untouched.client_id].includes(e.sub),
    );
    expect(mine).toEqual(
      expect.arrayContaining([
        { tenant, sub: changed.client_id, version: 3, deleted: false, ttl: expect.any(Number) },
        { tenant, sub: deleted.client_id, version: 2, deleted: true, ttl: expect.any(Number) },
      ]),
    );
    expect(mine).toHaveLength(2);
    for (const { ttl } of mine) expect(ttl).toBeGreaterThan(h.config.ACCESS_TOKEN_TTL + 60 - 10);
    expect(res.body.position).toMatch(/^[1-9][0-9]*$/);
  });

  test('When a principal never existed, then 404; an untouched one is version 1', async () => {
    const account = await api.createServiceAccount(tenant);

    const missing = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/principals/nobody`)
      .set('authorization', AUTH);
    const fresh = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/principals/${account.client_id}`)
      .set('authorization', AUTH);
    const wrongRealm = await request(h.internalUrl)
      .get(`/internal/v1/realms/no-such-realm-w/principals/${account.client_id}`)
      .set('authorization', AUTH);

    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 404, message: 'Principal not found' });
    expect(fresh.body).toEqual({ tenant, sub: account.client_id, version: 1, deleted: false });
    expect(wrongRealm.status).toBe(404);
  });
});

/** What the User view adds for a person who never signed in and has no factor. */
const PERSON = {
  status: 'active',
  last_sign_in_at: null,
  factors: { passkeys: 0, totp: false, recovery_codes_left: 0 },
  token_version: expect.any(Number),
  factor_generation: 0,
  factor_required: false,
  revision: 1,
};

describe('users', () => {
  test('When users are listed, then the Account Admin and added users come with their roles and never a password', async () => {
    const { tenant: own, adminId, adminEmail } = await h.createTenant();
    const viewer = await h.createUser(own, 'View');

    const list = await request(h.internalUrl)
      .get(`/internal/v1/realms/${own}/users`)
      .set('authorization', AUTH);
    const one = await request(h.internalUrl)
      .get(`/internal/v1/realms/${own}/users/${viewer.id}`)
      .set('authorization', AUTH);
    const missing = await request(h.internalUrl)
      .get(`/internal/v1/realms/${own}/users/00000000-0000-0000-0000-000000000000`)
      .set('authorization', AUTH);

    expect(list.status).toBe(200);
    expect(list.body).toEqual(
      [
        {
          id: adminId,
          email: adminEmail,
          role: 'Account Admin',
          created_at: expect.stringMatching(ISO),
          ...PERSON,
        },
        {
          id: viewer.id,
          email: viewer.email,
          role: 'View',
          created_at: expect.stringMatching(ISO),
          ...PERSON,
        },
      ].sort((a, b) => a.email.toLowerCase().localeCompare(b.email.toLowerCase())),
    );
    expect(one.body).toEqual({
      id: viewer.id,
      email: viewer.email,
      role: 'View',
      created_at: expect.stringMatching(ISO),
      ...PERSON,
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 404, message: 'User not found' });
  });

  test('When a person is signed out everywhere, then their token version is bumped (the revocation entry says so) and the person comes back', async () => {
    const { tenant: own } = await h.createTenant();
    const viewer = await h.createUser(own, 'View');
    const signOut = () =>
      request(h.internalUrl)
        .post(`/internal/v1/realms/${own}/users/${viewer.id}/sign-out-everywhere`)
        .set('authorization', AUTH);

    const first = await signOut();
    const second = await signOut();

    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body).toMatchObject({ id: viewer.id, email: viewer.email, token_version: 2 });
    expect(second.body).toMatchObject({ token_version: 3 });
    const entry = await request(h.internalUrl)
      .get(`/internal/v1/realms/${own}/principals/${viewer.id}`)
      .set('authorization', AUTH);
    expect(entry.body).toMatchObject({ sub: viewer.id, version: 3, deleted: false });
  });

  test('When sign-out everywhere names a service account, an unknown person or an unknown realm, then 404', async () => {
    const { tenant: own } = await h.createTenant();
    const account = await request(h.internalUrl)
      .post(`/internal/v1/realms/${own}/service-accounts`)
      .set('authorization', AUTH)
      .send({ name: 'not-a-person', actor: 'test' });
    for (const path of [
      `${own}/users/${account.body.client_id}`,
      `${own}/users/00000000-0000-0000-0000-000000000000`,
      `no-such-realm-here/users/00000000-0000-0000-0000-000000000000`,
    ]) {
      const res = await request(h.internalUrl)
        .post(`/internal/v1/realms/${path}/sign-out-everywhere`)
        .set('authorization', AUTH);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    const version = await request(h.internalUrl)
      .get(`/internal/v1/realms/${own}/principals/${account.body.client_id}`)
      .set('authorization', AUTH);
    expect(version.body).toMatchObject({ version: 1 });
  });
});

describe('identifiers Postgres cannot store', () => {
  test('When a path id contains NUL, then it names nothing (404), never a 500', async () => {
    for (const path of [`service-accounts/sa-%00x`, `users/%00`, `principals/a%00b`]) {
      const res = await request(h.internalUrl)
        .get(`/internal/v1/realms/${tenant}/${path}`)
        .set('authorization', AUTH);
      expect(res.status).toBe(404);
    }
  });
});
