import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { basic, decodeJwt, useHarness, TEST_ENV, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';
import { tokenRequest as tokenRequestFrom, verifyToken } from './helpers/token-client.js';

let h: Harness;
let tenant: string;
let api: ReturnType<typeof internal>;

useHarness((started, first) => {
  h = started;
  tenant = first;
  api = internal(h);
});

function tokenRequest(realm = tenant) {
  return tokenRequestFrom(h, realm);
}

function verify(token: string, realm: string) {
  return verifyToken(h, token, realm);
}

describe('client credentials grant', () => {
  test('When a new service account authenticates with client_secret_basic, then it gets an RFC 9068 JWT for the Plant Store with every contract claim', async () => {
    const account = await api.createServiceAccount(tenant);

    const res = await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 300,
      scope: 'plants:read',
    });
    const { header, payload } = decodeJwt(res.body.access_token);
    expect(header).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: expect.any(String) });
    expect(payload).toEqual({
      iss: h.issuer(tenant),
      sub: account.client_id,
      aud: TEST_ENV.PLANT_STORE_AUDIENCE,
      client_id: account.client_id,
      iat: expect.any(Number),
      exp: (payload.iat as number) + 300,
      jti: expect.any(String),
      scope: 'plants:read',
      tenant,
      principal_type: 'service_account',
      role: 'View',
      grants: [],
      ver: 1,
      cred: expect.stringMatching(/^secret:sec-[0-9a-f]{16}$/),
    });
    await expect(verify(res.body.access_token, tenant)).resolves.toMatchObject({
      sub: account.client_id,
    });
  });

  test('When the client authenticates with client_secret_post, then it gets a token too', async () => {
    const account = await api.createServiceAccount(tenant);

    const res = await tokenRequest().type('form').send({
      grant_type: 'client_credentials',
      client_id: account.client_id,
      client_secret: account.secret,
    });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 300,
      scope: 'plants:read',
    });
  });

  test('When an Edit account with a grant asks without scope, then it gets both plant scopes, its grants and its current version', async () => {
    const account = await api.createServiceAccount(tenant);
    await api
      .patch(tenant, account.client_id, {
        role: 'Edit',
        grants: [{ tag: 'roses', permission: 'edit' }],
      })
      .expect(200);

    const res = await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('plants:read plants:write');
    expect(decodeJwt(res.body.access_token).payload).toMatchObject({
      scope: 'plants:read plants:write',
      role: 'Edit',
      grants: [{ tag: 'roses', permission: 'edit' }],
      ver: 2,
    });
  });

  test('When a View account with an edit grant asks without scope, then it gets plants:write too (its grant needs it) and stays View', async () => {
    const account = await api.createServiceAccount(tenant);
    await api
      .patch(tenant, account.client_id, { grants: [{ tag: 'succulent', permission: 'edit' }] })
      .expect(200);

    const res = await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });
    const narrowed = await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials', scope: 'plants:read' });

    expect({ status: res.status, scope: res.body.scope }).toEqual({
      status: 200,
      scope: 'plants:read plants:write',
    });
    expect(decodeJwt(res.body.access_token).payload).toMatchObject({
      scope: 'plants:read plants:write',
      role: 'View',
      grants: [{ tag: 'succulent', permission: 'edit' }],
    });
    expect({ status: narrowed.status, scope: narrowed.body.scope }).toEqual({
      status: 200,
      scope: 'plants:read',
    });
  });

  test('When an Edit account asks for plants:read only, then the token carries only that scope', async () => {
    const account = await api.createServiceAccount(tenant);
    await api.patch(tenant, account.client_id, { role: 'Edit' }).expect(200);

    const res = await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials', scope: 'plants:read' });

    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('plants:read');
    expect(decodeJwt(res.body.access_token).payload.scope).toBe('plants:read');
  });

  test('When the Plant Store is named as resource, then the audience is the Plant Store', async () => {
    const account = await api.createServiceAccount(tenant);

    const res = await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials', resource: TEST_ENV.PLANT_STORE_AUDIENCE });

    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.access_token).payload.aud).toBe(TEST_ENV.PLANT_STORE_AUDIENCE);
  });

  test('When the Plant Store is named with a trailing slash, then it is the same resource and the audience is its configured spelling', async () => {
    const account = await api.createServiceAccount(tenant);

    const res = await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials', resource: `${TEST_ENV.PLANT_STORE_AUDIENCE}/` });

    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.access_token).payload.aud).toBe(TEST_ENV.PLANT_STORE_AUDIENCE);
  });

  test('When a secret is reset, then the old secret fails at once and the new one gets a token with the new version', async () => {
    const account = await api.createServiceAccount(tenant);
    await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(200);

    const reset = await api.reset(tenant, account.client_id).expect(200);
    const withOld = await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });
    const withNew = await tokenRequest()
      .set('authorization', basic(account.client_id, reset.body.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(withOld.status).toBe(401);
    expect(withOld.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
    expect(withNew.status).toBe(200);
    expect(decodeJwt(withNew.body.access_token).payload.ver).toBe(2);
  });

  test('When a service account is deleted, then its secret fails at once', async () => {
    const account = await api.createServiceAccount(tenant);
    await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(200);

    await api.remove(tenant, account.client_id).expect(204);
    const res = await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });
});
describe('metrics', () => {
  function counter(text: string, name: string, labels: string): number {
    const line = text
      .split('\n')
      .find(
        (l) => l.startsWith(`${name}{`) && labels.split(',').every((label) => l.includes(label)),
      );
    return line === undefined ? 0 : Number(line.split(' ').pop());
  }

  test('When tokens are issued and refused, then /metrics counts them by grant type and error', async () => {
    const account = await api.createServiceAccount(tenant);
    const before = (await request(h.managementUrl).get('/metrics')).text;

    await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(200);
    await tokenRequest()
      .set('authorization', basic(account.client_id, 'pss_wrong'))
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(401);
    const after = (await request(h.managementUrl).get('/metrics')).text;

    const issued = 'grant_type="client_credentials"';
    expect(
      counter(after, 'oauth_tokens_issued_total', issued) -
        counter(before, 'oauth_tokens_issued_total', issued),
    ).toBe(1);
    const failed = 'grant_type="client_credentials",error="invalid_client"';
    expect(
      counter(after, 'oauth_token_errors_total', failed) -
        counter(before, 'oauth_token_errors_total', failed),
    ).toBe(1);
  });
});
