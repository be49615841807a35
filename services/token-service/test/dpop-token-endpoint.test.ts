/**
 * DPoP at the token endpoint (RFC 9449 §5): the per-account requirement, tokens bound to the
 * proof's key (`cnf.jkt`, `token_type: DPoP`), proofs for another request or replayed, and
 * discovery. The bearer flow of an account that does not require DPoP stays as it was.
 */
import { createHash, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { Redis } from 'ioredis';
import { dpopKey, TEST_REDIS_URL } from '@plant/test-kit';
import { basic, decodeJwt, useHarness, type Harness } from './helpers/harness.js';
import { internal, type CreatedAccount } from './helpers/internal-client.js';
import { tokenRequest, verifyToken } from './helpers/token-client.js';

let h: Harness;
let tenant: string;
let api: ReturnType<typeof internal>;
let redis: Redis;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
});

afterAll(() => redis.quit());

useHarness((started, first) => {
  h = started;
  tenant = first;
  api = internal(h);
});

const tokenEndpoint = () => `${h.publicUrl}${h.tokenUrl(tenant)}`;
const grant = (account: CreatedAccount, proof?: string) => {
  const req = tokenRequest(h, tenant)
    .set('authorization', basic(account.client_id, account.secret))
    .type('form');
  if (proof !== undefined) req.set('dpop', proof);
  return req.send({ grant_type: 'client_credentials' });
};

async function requiringDpop(): Promise<CreatedAccount> {
  const account = await api.createServiceAccount(tenant);
  const res = await api.patch(tenant, account.client_id, { dpop_bound_access_tokens: true });
  expect({ status: res.status, dpop: res.body.dpop_bound_access_tokens }).toEqual({
    status: 200,
    dpop: true,
  });
  return account;
}

describe('DPoP at the token endpoint', () => {
  test('When an account that does not require DPoP asks without a proof, then it gets the bearer token of before (no cnf), and the account says dpop_bound_access_tokens false', async () => {
    const account = await api.createServiceAccount(tenant);
    expect(account).toMatchObject({ dpop_bound_access_tokens: false });
    const res = await grant(account);
    expect({
      status: res.status,
      type: res.body.token_type,
      cnf: decodeJwt(res.body.access_token).payload.cnf,
    }).toEqual({ status: 200, type: 'Bearer', cnf: undefined });
  });

  test.each(['ES256', 'EdDSA'] as const)(
    'When a client sends an %s proof, then its token is bound to the key: token_type DPoP and cnf.jkt its thumbprint, signed by the realm',
    async (alg) => {
      const account = await api.createServiceAccount(tenant);
      const key = dpopKey(alg);
      const res = await grant(account, key.proof({ htm: 'POST', htu: tokenEndpoint() }));
      expect({ status: res.status, type: res.body.token_type }).toEqual({
        status: 200,
        type: 'DPoP',
      });
      await expect(verifyToken(h, res.body.access_token, tenant)).resolves.toMatchObject({
        cnf: { jkt: key.thumbprint },
        sub: account.client_id,
      });
    },
  );

  test('When an account is set to require DPoP, then a grant without a proof is refused, one with a proof is bound, and its earlier bearer tokens are revoked (version bumped)', async () => {
    const account = await api.createServiceAccount(tenant);
    const before = await grant(account);
    await api.patch(tenant, account.client_id, { dpop_bound_access_tokens: true });
    const refused = await grant(account);
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 400,
      body: {
        error: 'invalid_dpop_proof',
        error_description: 'this client requires a DPoP proof (RFC 9449) with every token request',
      },
    });
    const key = dpopKey();
    const bound = await grant(account, key.proof({ htm: 'POST', htu: tokenEndpoint() }));
    const [oldVer, newVer] = [
      decodeJwt(before.body.access_token).payload.ver as number,
      decodeJwt(bound.body.access_token).payload.ver as number,
    ];
    expect({ status: bound.status, type: bound.body.token_type, bumped: newVer > oldVer }).toEqual({
      status: 200,
      type: 'DPoP',
      bumped: true,
    });
    const off = await api.patch(tenant, account.client_id, { dpop_bound_access_tokens: false });
    expect({ status: off.status, dpop: off.body.dpop_bound_access_tokens }).toEqual({
      status: 200,
      dpop: false,
    });
    expect((await grant(account)).body.token_type).toBe('Bearer');
  });

  test.each<[string, (url: string, key: ReturnType<typeof dpopKey>) => string]>([
    ['another method', (url, key) => key.proof({ htm: 'GET', htu: url })],
    ['another URL', (url, key) => key.proof({ htm: 'POST', htu: `${url}/x` })],
    [
      'a stale iat',
      (url, key) => key.proof({ htm: 'POST', htu: url, iat: Math.floor(Date.now() / 1000) - 3600 }),
    ],
    [
      'a symmetric key',
      (url, key) =>
        key.proof({ htm: 'POST', htu: url, header: { jwk: { kty: 'oct', k: 'c2VjcmV0' } } }),
    ],
    ['alg HS256', (url, key) => key.proof({ htm: 'POST', htu: url, header: { alg: 'HS256' } })],
    ['garbage', () => 'not.a.proof'],
  ])(
    'When an account requiring DPoP sends a proof with %s, then 400 invalid_dpop_proof and no token',
    async (_case, proof) => {
      const account = await requiringDpop();
      const res = await grant(account, proof(tokenEndpoint(), dpopKey()));
      expect({ status: res.status, error: res.body.error, token: res.body.access_token }).toEqual({
        status: 400,
        error: 'invalid_dpop_proof',
        token: undefined,
      });
    },
  );

  test('When one proof is sent twice, or 12 times at once, then exactly one token is issued for it (replay claimed atomically in Redis)', async () => {
    const account = await requiringDpop();
    const key = dpopKey();
    const proof = key.proof({ htm: 'POST', htu: tokenEndpoint() });
    expect((await grant(account, proof)).status).toBe(200);
    const again = await grant(account, proof);
    expect({ status: again.status, error: again.body.error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
    const burst = key.proof({ htm: 'POST', htu: tokenEndpoint() });
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () => grant(account, burst).then((res) => res.status)),
    );
    expect(statuses.filter((s) => s === 200).length).toBe(1);
  });

  test('When a proof dated 250 s ahead buys a token, then its jti is remembered until the proof itself expires (iat + 300 s), not 300 s from its use', async () => {
    const account = await requiringDpop();
    const jti = randomUUID();
    const proof = dpopKey().proof({
      htm: 'POST',
      htu: tokenEndpoint(),
      jti,
      iat: Math.floor(Date.now() / 1000) + 250,
    });

    const first = await grant(account, proof);
    const remembered = await redis.pttl(
      `plantstore:dpop-jti:${createHash('sha256').update(`token-endpoint:${account.client_id}:${jti}`).digest('base64url')}`,
    );
    const again = await grant(account, proof);

    expect({ status: first.status, type: first.body.token_type }).toEqual({
      status: 200,
      type: 'DPoP',
    });
    // The proof is accepted until iat + 300 s, about 550 s from now: 300 s would let it buy a second token then.
    expect(remembered).toBeGreaterThan(500_000);
    expect({ status: again.status, error: again.body.error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
  });

  const hostHeaders: Array<[string, Record<string, string>]> = [
    ['Host', { host: 'evil.example' }],
    ['X-Forwarded-Host (one trusted proxy hop)', { 'x-forwarded-host': 'evil.example' }],
  ];
  test.each(hostHeaders)(
    "When a proof's htu names an attacker's host and the request says so in %s, then 400 invalid_dpop_proof and no token",
    async (_header, headers) => {
      const account = await requiringDpop();
      const proof = dpopKey().proof({
        htm: 'POST',
        htu: `http://evil.example${h.tokenUrl(tenant)}`,
      });

      const res = await grant(account, proof).set(headers);

      expect({ status: res.status, error: res.body.error, token: res.body.access_token }).toEqual({
        status: 400,
        error: 'invalid_dpop_proof',
        token: undefined,
      });
    },
  );

  test.each(hostHeaders)(
    'When a proof names the configured token endpoint and the request carries another host in %s, then the token is issued (htu comes from AUTH_URL)',
    async (_header, headers) => {
      const account = await requiringDpop();
      const proof = dpopKey().proof({ htm: 'POST', htu: tokenEndpoint() });

      const res = await grant(account, proof).set(headers);

      expect({ status: res.status, type: res.body.token_type }).toEqual({
        status: 200,
        type: 'DPoP',
      });
    },
  );

  test("When a proof's htu names an attacker's host and the request target is absolute-form on that host, then 400 invalid_dpop_proof and no token", async () => {
    const account = await requiringDpop();
    const target = `http://evil.example${h.tokenUrl(tenant)}`;
    const proof = dpopKey().proof({ htm: 'POST', htu: target });
    const { hostname, port } = new URL(h.publicUrl);

    const res = await new Promise<{ status: number; body: Record<string, unknown> }>(
      (resolve, reject) => {
        const req = httpRequest(
          {
            host: hostname,
            port,
            method: 'POST',
            path: target,
            headers: {
              authorization: basic(account.client_id, account.secret),
              dpop: proof,
              'content-type': 'application/x-www-form-urlencoded',
            },
          },
          (answer) => {
            const chunks: Buffer[] = [];
            answer.on('data', (chunk: Buffer) => chunks.push(chunk));
            answer.on('end', () =>
              resolve({
                status: answer.statusCode ?? 0,
                body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
              }),
            );
          },
        );
        req.on('error', reject);
        req.end('grant_type=client_credentials');
      },
    );

    expect({ status: res.status, error: res.body.error, token: res.body.access_token }).toEqual({
      status: 400,
      error: 'invalid_dpop_proof',
      token: undefined,
    });
  });

  test('When discovery is read with another Host, then its token endpoint is still under AUTH_URL', async () => {
    const res = await request(h.publicUrl)
      .get(`/realms/${tenant}/.well-known/openid-configuration`)
      .set('host', 'evil.example')
      .expect(200);

    expect(res.body.token_endpoint).toBe(tokenEndpoint());
  });

  test('When discovery is read, then it advertises the DPoP algorithms and the introspection endpoint', async () => {
    const res = await request(h.publicUrl)
      .get(`/realms/${tenant}/.well-known/openid-configuration`)
      .expect(200);
    expect(res.body).toMatchObject({
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519'],
      introspection_endpoint: `${h.issuer(tenant)}/protocol/openid-connect/token/introspect`,
      claim_types_supported: ['normal'],
    });
  });

  test('When a PATCH sets dpop_bound_access_tokens to something else than a boolean, then 400 and nothing changes', async () => {
    const account = await api.createServiceAccount(tenant);
    const res = await api.patch(tenant, account.client_id, { dpop_bound_access_tokens: 'yes' });
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 400 });
    expect((await grant(account)).body.token_type).toBe('Bearer');
  });
});
