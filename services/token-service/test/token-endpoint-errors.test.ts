import { beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { basic, useHarness, TEST_ENV, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';
import { tokenRequest as tokenRequestFrom } from './helpers/token-client.js';

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

describe('RFC 6749 §5.2 errors', () => {
  let clientId: string;
  let secret: string;

  beforeAll(async () => {
    ({ client_id: clientId, secret } = await api.createServiceAccount(tenant));
  });

  test('When the secret is wrong (Basic), then 401 invalid_client with WWW-Authenticate: Basic', async () => {
    // The last character changed (a secret ending in `x` would otherwise be sent unchanged, 1 run in 64).
    const res = await tokenRequest()
      .set(
        'authorization',
        basic(clientId, `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`),
      )
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['www-authenticate']).toBe(
      `Basic realm="${h.issuer(tenant)}", error="invalid_client", error_description="client authentication failed"`,
    );
    expect(res.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });

  test('When the secret is wrong (post), then 401 invalid_client', async () => {
    const res = await tokenRequest().type('form').send({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: 'pss_not-a-secret',
    });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });

  test("When another account's secret is presented, then 401 invalid_client", async () => {
    const other = await api.createServiceAccount(tenant);
    const res = await tokenRequest()
      .set('authorization', basic(clientId, other.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });

  test('When no client authentication is sent, then 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const res = await tokenRequest().type('form').send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Basic realm="${h.issuer(tenant)}"`);
    expect(res.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication is required',
    });
  });

  test('When the client is unknown, then 401 invalid_client', async () => {
    const res = await tokenRequest()
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: 'sa-unknown', client_secret: secret });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });

  test.each([
    [
      'grant_type is missing',
      {},
      'form',
      { error: 'invalid_request', error_description: "missing required parameter 'grant_type'" },
    ],
    [
      'grant_type is unsupported',
      { grant_type: 'password' },
      'form',
      { error: 'unsupported_grant_type', error_description: 'unsupported grant_type requested' },
    ],
    [
      'grant_type is authorization_code for a service account',
      { grant_type: 'authorization_code', code: 'x', redirect_uri: 'http://x' },
      'form',
      {
        error: 'unauthorized_client',
        error_description: 'requested grant type is not allowed for this client',
      },
    ],
    [
      'a View account asks for plants:write',
      { grant_type: 'client_credentials', scope: 'plants:write' },
      'form',
      {
        error: 'invalid_scope',
        error_description: 'requested scope is not allowed',
        scope: 'plants:write',
      },
    ],
    [
      'an unknown scope is asked for',
      { grant_type: 'client_credentials', scope: 'plants:read admin' },
      'form',
      {
        error: 'invalid_scope',
        error_description: 'requested scope is not allowed',
        scope: 'admin',
      },
    ],
    [
      'openid is asked for by a service account',
      { grant_type: 'client_credentials', scope: 'openid' },
      'form',
      {
        error: 'invalid_scope',
        error_description: 'requested scope is not allowed',
        scope: 'openid',
      },
    ],
    [
      'the account-admin API is asked for by a service account',
      { grant_type: 'client_credentials', resource: TEST_ENV.ACCOUNT_ADMIN_AUDIENCE },
      'form',
      { error: 'invalid_target', error_description: 'resource indicator is missing, or unknown' },
    ],
    [
      'an unknown resource is asked for',
      { grant_type: 'client_credentials', resource: 'https://elsewhere.test' },
      'form',
      { error: 'invalid_target', error_description: 'resource indicator is missing, or unknown' },
    ],
  ])('When %s, then 400 with the RFC error', async (_name, body, type, expected) => {
    const res = await tokenRequest()
      .set('authorization', basic(clientId, secret))
      .type(type)
      .send(body);

    expect(res.status).toBe(400);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual(expected);
  });

  test('When the client_id contains NUL, then 401 invalid_client, never a 500', async () => {
    const res = await tokenRequest()
      .type('form')
      .send('grant_type=client_credentials&client_id=sa-%00x&client_secret=pss_x');

    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });

  test('When the body is JSON, then 400 invalid_request', async () => {
    const res = await tokenRequest()
      .set('authorization', basic(clientId, secret))
      .set('content-type', 'application/json')
      .send('{"grant_type":"client_credentials"}');

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description:
        'only application/x-www-form-urlencoded content-type bodies are supported on POST /protocol/openid-connect/token',
    });
  });

  test('When the content type is missing, then 400 invalid_request', async () => {
    const res = await tokenRequest()
      .set('authorization', basic(clientId, secret))
      .unset('content-type')
      .send(Buffer.from('grant_type=client_credentials'));

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('When a parameter is repeated, then 400 invalid_request', async () => {
    const res = await tokenRequest()
      .set('authorization', basic(clientId, secret))
      .type('form')
      .send('grant_type=client_credentials&grant_type=client_credentials');

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: "'grant_type' parameter must not be provided twice",
    });
  });

  test('When the Authorization header is malformed, then 400 invalid_request', async () => {
    const res = await tokenRequest()
      .set('authorization', 'Basic %%%')
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: 'invalid authorization header value format',
    });
  });

  test('When credentials come both in the header and the body, then 400 invalid_request', async () => {
    const res = await tokenRequest()
      .set('authorization', basic(clientId, secret))
      .type('form')
      .send({ grant_type: 'client_credentials', client_secret: secret });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: 'client authentication must only be provided using one mechanism',
    });
  });

  test('When the body is larger than the limit, then 400 invalid_request and no crash', async () => {
    const res = await tokenRequest()
      .set('authorization', basic(clientId, secret))
      .type('form')
      .send(`grant_type=client_credentials&pad=${'x'.repeat(60 * 1024)}`);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: 'failed to parse the request body',
    });
  });

  test('When the client prefers HTML, then the error is still JSON', async () => {
    const res = await tokenRequest()
      .set('accept', 'text/html')
      .set('authorization', basic(clientId, 'pss_wrong'))
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });

  test('When the token endpoint is called with GET, then 405 with Allow: POST', async () => {
    const res = await request(h.publicUrl).get(h.tokenUrl(tenant));

    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body).toEqual({
      error: 'invalid_request',
      error_description: 'the token endpoint accepts POST requests only',
    });
  });
});
