import { createPublicKey } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { grantRequestId } from '../src/oidc/grant-request-id.js';
import { basic, decodeJwt, useHarness, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';
import {
  realmJwks,
  tokenRequest as tokenRequestFrom,
  verifyToken,
} from './helpers/token-client.js';

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

function jwks(realm: string) {
  return realmJwks(h, realm);
}

function verify(token: string, realm: string) {
  return verifyToken(h, token, realm);
}

describe('realms', () => {
  test('When the realm does not exist, then every realm path is 404 in the Error shape', async () => {
    for (const path of [
      '/realms/no-such-realm-x/protocol/openid-connect/token',
      '/realms/no-such-realm-x/.well-known/openid-configuration',
      '/realms/Not_A_Name/protocol/openid-connect/certs',
    ]) {
      const res = path.endsWith('token')
        ? await request(h.publicUrl)
            .post(path)
            .type('form')
            .send({ grant_type: 'client_credentials' })
        : await request(h.publicUrl).get(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 404, message: expect.any(String) });
    }
  });

  test('When a tenant is created after start, then its realm works without a restart', async () => {
    await request(h.publicUrl)
      .get('/realms/late-tenant-probe/.well-known/openid-configuration')
      .expect(404);
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
      grant_types_supported: [
        'authorization_code',
        'refresh_token',
        'client_credentials',
        'urn:ietf:params:oauth:grant-type:device_code',
        'urn:ietf:params:oauth:grant-type:token-exchange',
      ],
      token_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
        'none',
      ],
      code_challenge_methods_supported: ['S256'],
    });
  });

  test("When realm A's token is compared with realm B, then its issuer and key never match B's and B refuses A's client", async () => {
    const { tenant: a } = await h.createTenant();
    const { tenant: b } = await h.createTenant();
    const account = await api.createServiceAccount(a);
    const res = await tokenRequest(a)
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(200);
    const { header, payload } = decodeJwt(res.body.access_token);

    const bKeys = await jwks(b);
    const atB = await tokenRequest(b)
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(payload.iss).toBe(h.issuer(a));
    expect(payload.tenant).toBe(a);
    expect(bKeys.map((k) => k.kid)).not.toContain(header.kid);
    await expect(verify(res.body.access_token, b)).rejects.toThrow('kid not in the realm JWKS');
    for (const key of bKeys) {
      expect(() =>
        jwt.verify(res.body.access_token, createPublicKey({ key: key as never, format: 'jwk' }), {
          algorithms: ['RS256'],
        }),
      ).toThrow('invalid signature');
    }
    expect(atB.status).toBe(401);
    expect(atB.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });
});
describe('the token endpoint, its realm built or not', () => {
  test('When the same requests reach a realm before and after its provider is built, then they get the same answers', async () => {
    const { tenant: fresh } = await h.createTenant();
    const account = await api.createServiceAccount(fresh);
    const cases: Array<() => request.Test> = [
      () =>
        tokenRequest(fresh)
          .set('authorization', basic(account.client_id, 'pss_wrong'))
          .type('form')
          .send({ grant_type: 'client_credentials' }),
      () => request(h.publicUrl).get(`${h.tokenUrl(fresh)}?grant_type=client_credentials`),
      () => tokenRequest(fresh).type('form').send({ grant_type: 'client_credentials' }),
      () =>
        tokenRequest(fresh)
          .set('authorization', basic(account.client_id, account.secret))
          .type('form')
          .send({ grant_type: 'password' }),
    ];
    const answer = (res: request.Response) => ({
      status: res.status,
      body: res.body as unknown,
      allow: res.headers.allow,
      wwwAuthenticate: res.headers['www-authenticate'],
    });

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
    await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(200);
    const provider = h.service.providers.grantEngine;
    const seen: Array<{ reqId?: string }> = [];
    const listener = () => seen.push(grantRequestId());
    provider.on('grant.success', listener);
    try {
      await tokenRequest()
        .set('x-request-id', 'grant-lane-id-1')
        .set('authorization', basic(account.client_id, account.secret))
        .type('form')
        .send({ grant_type: 'client_credentials' })
        .expect(200);
    } finally {
      provider.off('grant.success', listener);
    }

    expect(seen).toEqual([{ reqId: 'grant-lane-id-1' }]);
    expect(grantRequestId()).toEqual({});
  });

  test('When a token is issued, then it carries a request id, gets one access line without the query, and counts under the route template', async () => {
    const account = await api.createServiceAccount(tenant);
    await tokenRequest()
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(200);
    const before = (await request(h.managementUrl).get('/metrics')).text;

    const res = await tokenRequest()
      .query({ note: 'in-the-query' })
      .set('x-request-id', 'token-route-probe-1')
      .set('authorization', basic(account.client_id, account.secret))
      .type('form')
      .send({ grant_type: 'client_credentials' });
    const after = (await request(h.managementUrl).get('/metrics')).text;

    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('token-route-probe-1');
    const lines = h.logs
      .filter((l) => l.includes('"reqId":"token-route-probe-1"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'request completed',
        req: { method: 'POST', path: h.tokenUrl(tenant) },
        res: { status: 200 },
      }),
    ]);
    const route =
      'http_requests_total{method="POST",route="/realms/:tenant/protocol/openid-connect/token",status="200"';
    const count = (text: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(route))
          ?.split(' ')
          .pop() ?? 0,
      );
    expect(count(after) - count(before)).toBe(1);
  });
});
