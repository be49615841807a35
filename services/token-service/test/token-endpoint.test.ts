import { createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { basic, decodeJwt, startHarness, TEST_ENV, uniqueIp, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';
import { grantRequestId } from '../src/provider/grant-request-id.js';

let h: Harness;
let tenant: string;
let api: ReturnType<typeof internal>;

beforeAll(async () => {
  h = await startHarness();
  api = internal(h);
  ({ tenant } = await h.createTenant());
});

afterAll(async () => {
  await h.close();
});

function tokenRequest(realm = tenant) {
  return request(h.publicUrl).post(h.tokenUrl(realm)).set('x-forwarded-for', uniqueIp());
}

async function jwks(realm: string): Promise<Array<Record<string, unknown>>> {
  const res = await request(h.publicUrl).get(`/realms/${realm}/protocol/openid-connect/certs`).expect(200);
  return (res.body as { keys: Array<Record<string, unknown>> }).keys;
}

async function verify(token: string, realm: string): Promise<jwt.JwtPayload> {
  const { header } = decodeJwt(token);
  const key = (await jwks(realm)).find((k) => k.kid === header.kid);
  if (!key) throw new Error('kid not in the realm JWKS');
  const pem = createPublicKey({ key: key as never, format: 'jwk' });
  return jwt.verify(token, pem, { algorithms: ['RS256'], issuer: h.issuer(realm), audience: TEST_ENV.PLANT_STORE_AUDIENCE }) as jwt.JwtPayload;
}

describe('client credentials grant', () => {
  test('When a new service account authenticates with client_secret_basic, then it gets an RFC 9068 JWT for the Plant Store with every contract claim', async () => {
    const account = await api.createServiceAccount(tenant);

    const res = await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 300, scope: 'plants:read' });
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
    });
    await expect(verify(res.body.access_token, tenant)).resolves.toMatchObject({ sub: account.client_id });
  });

  test('When the client authenticates with client_secret_post, then it gets a token too', async () => {
    const account = await api.createServiceAccount(tenant);

    const res = await tokenRequest().type('form').send({ grant_type: 'client_credentials', client_id: account.client_id, client_secret: account.secret });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 300, scope: 'plants:read' });
  });

  test('When an Edit account with a grant asks without scope, then it gets both plant scopes, its grants and its current version', async () => {
    const account = await api.createServiceAccount(tenant);
    await api.patch(tenant, account.client_id, { role: 'Edit', grants: [{ tag: 'roses', permission: 'edit' }] }).expect(200);

    const res = await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('plants:read plants:write');
    expect(decodeJwt(res.body.access_token).payload).toMatchObject({
      scope: 'plants:read plants:write',
      role: 'Edit',
      grants: [{ tag: 'roses', permission: 'edit' }],
      ver: 2,
    });
  });

  test('When an Edit account asks for plants:read only, then the token carries only that scope', async () => {
    const account = await api.createServiceAccount(tenant);
    await api.patch(tenant, account.client_id, { role: 'Edit' }).expect(200);

    const res = await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials', scope: 'plants:read' });

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
    await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' }).expect(200);

    const reset = await api.reset(tenant, account.client_id).expect(200);
    const withOld = await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' });
    const withNew = await tokenRequest().set('authorization', basic(account.client_id, reset.body.secret)).type('form').send({ grant_type: 'client_credentials' });

    expect(withOld.status).toBe(401);
    expect(withOld.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    expect(withNew.status).toBe(200);
    expect(decodeJwt(withNew.body.access_token).payload.ver).toBe(2);
  });

  test('When a service account is deleted, then its secret fails at once', async () => {
    const account = await api.createServiceAccount(tenant);
    await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' }).expect(200);

    await api.remove(tenant, account.client_id).expect(204);
    const res = await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });
});

describe('RFC 6749 §5.2 errors', () => {
  let clientId: string;
  let secret: string;

  beforeAll(async () => {
    ({ client_id: clientId, secret } = await api.createServiceAccount(tenant));
  });

  test('When the secret is wrong (Basic), then 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const res = await tokenRequest().set('authorization', basic(clientId, `${secret.slice(0, -1)}x`)).type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['www-authenticate']).toBe(`Basic realm="${h.issuer(tenant)}", error="invalid_client", error_description="client authentication failed"`);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test('When the secret is wrong (post), then 401 invalid_client', async () => {
    const res = await tokenRequest().type('form').send({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'pss_not-a-secret' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test("When another account's secret is presented, then 401 invalid_client", async () => {
    const other = await api.createServiceAccount(tenant);
    const res = await tokenRequest().set('authorization', basic(clientId, other.secret)).type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test('When no client authentication is sent, then 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const res = await tokenRequest().type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Basic realm="${h.issuer(tenant)}"`);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'client authentication is required' });
  });

  test('When the client is unknown, then 401 invalid_client', async () => {
    const res = await tokenRequest().type('form').send({ grant_type: 'client_credentials', client_id: 'sa-unknown', client_secret: secret });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test.each([
    ['grant_type is missing', {}, 'form', { error: 'invalid_request', error_description: "missing required parameter 'grant_type'" }],
    ['grant_type is unsupported', { grant_type: 'password' }, 'form', { error: 'unsupported_grant_type', error_description: 'unsupported grant_type requested' }],
    ['grant_type is authorization_code for a service account', { grant_type: 'authorization_code', code: 'x', redirect_uri: 'http://x' }, 'form', { error: 'unauthorized_client', error_description: 'requested grant type is not allowed for this client' }],
    ['a View account asks for plants:write', { grant_type: 'client_credentials', scope: 'plants:write' }, 'form', { error: 'invalid_scope', error_description: 'requested scope is not allowed', scope: 'plants:write' }],
    ['an unknown scope is asked for', { grant_type: 'client_credentials', scope: 'plants:read admin' }, 'form', { error: 'invalid_scope', error_description: 'requested scope is not allowed', scope: 'admin' }],
    ['openid is asked for by a service account', { grant_type: 'client_credentials', scope: 'openid' }, 'form', { error: 'invalid_scope', error_description: 'requested scope is not allowed', scope: 'openid' }],
    ['the account-admin API is asked for by a service account', { grant_type: 'client_credentials', resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE }, 'form', { error: 'invalid_target', error_description: 'resource indicator is missing, or unknown' }],
    ['an unknown resource is asked for', { grant_type: 'client_credentials', resource: 'https://elsewhere.test' }, 'form', { error: 'invalid_target', error_description: 'resource indicator is missing, or unknown' }],
  ])('When %s, then 400 with the RFC error', async (_name, body, type, expected) => {
    const res = await tokenRequest().set('authorization', basic(clientId, secret)).type(type).send(body);

    expect(res.status).toBe(400);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual(expected);
  });

  test('When the client_id contains NUL, then 401 invalid_client, never a 500', async () => {
    const res = await tokenRequest().type('form').send('grant_type=client_credentials&client_id=sa-%00x&client_secret=pss_x');

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test('When the body is JSON, then 400 invalid_request', async () => {
    const res = await tokenRequest().set('authorization', basic(clientId, secret)).set('content-type', 'application/json').send('{"grant_type":"client_credentials"}');

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: 'only application/x-www-form-urlencoded content-type bodies are supported on POST /protocol/openid-connect/token',
    });
  });

  test('When the content type is missing, then 400 invalid_request', async () => {
    const res = await tokenRequest().set('authorization', basic(clientId, secret)).unset('content-type').send(Buffer.from('grant_type=client_credentials'));

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('When a parameter is repeated, then 400 invalid_request', async () => {
    const res = await tokenRequest().set('authorization', basic(clientId, secret)).type('form').send('grant_type=client_credentials&grant_type=client_credentials');

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: "'grant_type' parameter must not be provided twice" });
  });

  test('When the Authorization header is malformed, then 400 invalid_request', async () => {
    const res = await tokenRequest().set('authorization', 'Basic %%%').type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'invalid authorization header value format' });
  });

  test('When credentials come both in the header and the body, then 400 invalid_request', async () => {
    const res = await tokenRequest().set('authorization', basic(clientId, secret)).type('form').send({ grant_type: 'client_credentials', client_secret: secret });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'client authentication must only be provided using one mechanism' });
  });

  test('When the body is larger than the limit, then 400 invalid_request and no crash', async () => {
    const res = await tokenRequest().set('authorization', basic(clientId, secret)).type('form').send(`grant_type=client_credentials&pad=${'x'.repeat(60 * 1024)}`);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'failed to parse the request body' });
  });

  test('When the client prefers HTML, then the error is still JSON', async () => {
    const res = await tokenRequest().set('accept', 'text/html').set('authorization', basic(clientId, 'pss_wrong')).type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test('When the token endpoint is called with GET, then 405 with Allow: POST', async () => {
    const res = await request(h.publicUrl).get(h.tokenUrl(tenant));

    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'the token endpoint accepts POST requests only' });
  });
});

describe('realms', () => {
  test('When the realm does not exist, then every realm path is 404 in the Error shape', async () => {
    for (const path of ['/realms/no-such-realm-x/protocol/openid-connect/token', '/realms/no-such-realm-x/.well-known/openid-configuration', '/realms/Not_A_Name/protocol/openid-connect/certs']) {
      const res = path.endsWith('token') ? await request(h.publicUrl).post(path).type('form').send({ grant_type: 'client_credentials' }) : await request(h.publicUrl).get(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 404, message: expect.any(String) });
    }
  });

  test('When a tenant is created after start, then its realm works without a restart', async () => {
    await request(h.publicUrl).get('/realms/late-tenant-probe/.well-known/openid-configuration').expect(404);
    const { tenant: late } = await h.createTenant();

    const res = await request(h.publicUrl).get(`/realms/${late}/.well-known/openid-configuration`);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      issuer: h.issuer(late),
      token_endpoint: `${h.issuer(late)}/protocol/openid-connect/token`,
      jwks_uri: `${h.issuer(late)}/protocol/openid-connect/certs`,
      authorization_endpoint: `${h.issuer(late)}/protocol/openid-connect/auth`,
      userinfo_endpoint: `${h.issuer(late)}/protocol/openid-connect/userinfo`,
      end_session_endpoint: `${h.issuer(late)}/protocol/openid-connect/logout`,
      grant_types_supported: ['authorization_code', 'client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
    });
  });

  test("When realm A's token is compared with realm B, then its issuer and key never match B's and B refuses A's client", async () => {
    const { tenant: a } = await h.createTenant();
    const { tenant: b } = await h.createTenant();
    const account = await api.createServiceAccount(a);
    const res = await tokenRequest(a).set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    const { header, payload } = decodeJwt(res.body.access_token);

    const bKeys = await jwks(b);
    const atB = await tokenRequest(b).set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' });

    expect(payload.iss).toBe(h.issuer(a));
    expect(payload.tenant).toBe(a);
    expect(bKeys.map((k) => k.kid)).not.toContain(header.kid);
    await expect(verify(res.body.access_token, b)).rejects.toThrow('kid not in the realm JWKS');
    for (const key of bKeys) {
      expect(() => jwt.verify(res.body.access_token, createPublicKey({ key: key as never, format: 'jwk' }), { algorithms: ['RS256'] })).toThrow('invalid signature');
    }
    expect(atB.status).toBe(401);
    expect(atB.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
  });
});

describe('metrics', () => {
  function counter(text: string, name: string, labels: string): number {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.split(',').every((label) => l.includes(label)));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  }

  test('When tokens are issued and refused, then /metrics counts them by grant type and error', async () => {
    const account = await api.createServiceAccount(tenant);
    const before = (await request(h.publicUrl).get('/metrics')).text;

    await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    await tokenRequest().set('authorization', basic(account.client_id, 'pss_wrong')).type('form').send({ grant_type: 'client_credentials' }).expect(401);
    const after = (await request(h.publicUrl).get('/metrics')).text;

    const issued = 'grant_type="client_credentials"';
    expect(counter(after, 'oauth_tokens_issued_total', issued) - counter(before, 'oauth_tokens_issued_total', issued)).toBe(1);
    const failed = 'grant_type="client_credentials",error="invalid_client"';
    expect(counter(after, 'oauth_token_errors_total', failed) - counter(before, 'oauth_token_errors_total', failed)).toBe(1);
  });
});

describe('the token endpoint, its realm built or not', () => {
  test('When the same requests reach a realm before and after its provider is built, then they get the same answers', async () => {
    const { tenant: fresh } = await h.createTenant();
    const account = await api.createServiceAccount(fresh);
    const cases: Array<() => request.Test> = [
      () => tokenRequest(fresh).set('authorization', basic(account.client_id, 'pss_wrong')).type('form').send({ grant_type: 'client_credentials' }),
      () => request(h.publicUrl).get(`${h.tokenUrl(fresh)}?grant_type=client_credentials`),
      () => tokenRequest(fresh).type('form').send({ grant_type: 'client_credentials' }),
      () => tokenRequest(fresh).set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'password' }),
    ];
    const answer = (res: request.Response) => ({ status: res.status, body: res.body as unknown, allow: res.headers.allow, wwwAuthenticate: res.headers['www-authenticate'] });

    // The first request of a realm waits for its provider to be built; the second finds it built.
    const first = [];
    for (const send of cases) {
      h.service.providers.invalidate(fresh);
      first.push(answer(await send()));
    }
    const second = [];
    for (const send of cases) second.push(answer(await send()));

    expect(second).toEqual(first);
    expect(first.map((a) => a.status)).toEqual([401, 405, 401, 400]);
  });

  test('When code runs inside a grant, then it finds the request id through oidc-provider (the process has no request context of its own)', async () => {
    const account = await api.createServiceAccount(tenant);
    await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    const provider = (await h.service.providers.providerFor(tenant))!;
    const seen: Array<{ reqId?: string }> = [];
    const listener = () => seen.push(grantRequestId());
    provider.on('grant.success', listener);
    try {
      await tokenRequest().set('x-request-id', 'grant-lane-id-1').set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    } finally {
      provider.off('grant.success', listener);
    }

    expect(seen).toEqual([{ reqId: 'grant-lane-id-1' }]);
    expect(grantRequestId()).toEqual({});
  });

  test('When a token is issued, then it carries a request id, gets one access line without the query, and counts under the route template', async () => {
    const account = await api.createServiceAccount(tenant);
    await tokenRequest().set('authorization', basic(account.client_id, account.secret)).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    const before = (await request(h.publicUrl).get('/metrics')).text;

    const res = await tokenRequest()
      .query({ note: 'in-the-query' })
      .set('x-request-id', 'token-route-probe-1')
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });
    const after = (await request(h.publicUrl).get('/metrics')).text;

    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('token-route-probe-1');
    const lines = h.logs.filter((l) => l.includes('"reqId":"token-route-probe-1"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ msg: 'request completed', req: { method: 'POST', path: h.tokenUrl(tenant) }, res: { status: 200 } })]);
    const route = 'http_requests_total{method="POST",route="/realms/:tenant/protocol/openid-connect/token",status="200"';
    const count = (text: string) => Number(text.split('\n').find((l) => l.startsWith(route))?.split(' ').pop() ?? 0);
    expect(count(after) - count(before)).toBe(1);
  });
});
