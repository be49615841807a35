import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { clientAssertion, clientKeyPair } from '@plant/test-kit';
import request from 'supertest';
import { decodeJwt, useHarness, type Harness } from './helpers/harness.js';
import {
  assertionGrant,
  keyedAccount,
  sendAssertion,
  type KeyedAccount,
} from './helpers/assertion-client.js';
import { internal } from './helpers/internal-client.js';
import { verifyToken } from './helpers/token-client.js';

let h: Harness;
let tenant: string;
/** One account for the refusals (each from an address of its own): a tenant holds 25 accounts. */
let shared: KeyedAccount;

useHarness((started, first) => {
  h = started;
  tenant = first;
});

beforeAll(async () => {
  shared = await keyedAccount(h, tenant);
});

const now = () => Math.floor(Date.now() / 1000);
const refused = { error: 'invalid_client', error_description: 'client authentication failed' };

describe('private_key_jwt (RFC 7523) at the token endpoint', () => {
  test('When discovery is read, then it advertises private_key_jwt beside the secret methods, with asymmetric algorithms only', async () => {
    const res = await request(h.publicUrl)
      .get(`/realms/${tenant}/.well-known/openid-configuration`)
      .expect(200);

    expect(res.body.token_endpoint_auth_methods_supported).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
      'none',
    ]);
    expect(res.body.token_endpoint_auth_signing_alg_values_supported).toEqual(
      expect.arrayContaining(['RS256', 'PS256', 'ES256', 'EdDSA']),
    );
    expect(
      res.body.token_endpoint_auth_signing_alg_values_supported.some(
        (alg: string) => alg.startsWith('HS') || alg === 'none',
      ),
    ).toBe(false);
  });

  test.each(['ec', 'rsa', 'ed25519'] as const)(
    'When a %s key signs an assertion for the realm issuer, then the account gets a token verifiable against the realm JWKS, carrying its claims',
    async (type) => {
      const keyed = await keyedAccount(h, tenant, type);

      const res = await assertionGrant(h, tenant, keyed).expect(200);

      const claims = await verifyToken(h, res.body.access_token, tenant);
      expect(claims).toMatchObject({
        sub: keyed.account.client_id,
        client_id: keyed.account.client_id,
        tenant,
        role: 'View',
        ver: 1,
        scope: 'plants:read',
      });
      expect(res.headers['cache-control']).toBe('no-store');
    },
  );

  test('When the assertion names the token endpoint as aud, or carries no kid, then it authenticates too', async () => {
    const keyed = await keyedAccount(h, tenant);
    const tokenEndpoint = `${h.issuer(tenant)}/protocol/openid-connect/token`;

    await assertionGrant(h, tenant, keyed, { aud: tokenEndpoint }).expect(200);
    await assertionGrant(h, tenant, keyed, {
      aud: ['https://elsewhere.example', tokenEndpoint],
    }).expect(200);
    await assertionGrant(h, tenant, { ...keyed, kid: undefined as unknown as string }).expect(200);
  });

  test('When a key is added as a PEM, then its thumbprint is its id and assertions naming it authenticate', async () => {
    const account = await internal(h).createServiceAccount(tenant);
    const key = clientKeyPair('rsa', 3072);
    const added = await internal(h)
      .addKey(tenant, account.client_id, { pem: key.publicPem })
      .expect(201);

    expect(added.body).toMatchObject({
      alg: 'RS256',
      id: added.body.thumbprint,
      created_by: 'admin@example.test',
      last_used_at: null,
    });
    await assertionGrant(h, tenant, { account, key, kid: added.body.id }).expect(200);
  });

  test('When the same assertion is sent twice, then the second is refused: a jti is accepted once', async () => {
    const keyed = await keyedAccount(h, tenant);
    const assertion = clientAssertion({
      clientId: keyed.account.client_id,
      audience: h.issuer(tenant),
      key: keyed.key,
      kid: keyed.kid,
    });

    await sendAssertion(h, tenant, keyed.account.client_id, assertion).expect(200);
    const replay = await sendAssertion(h, tenant, keyed.account.client_id, assertion).expect(401);

    expect(replay.body).toEqual(refused);
  });

  test('When one assertion is sent 20 times at once, then exactly one token is issued', async () => {
    const keyed = await keyedAccount(h, tenant);
    const assertion = clientAssertion({
      clientId: keyed.account.client_id,
      audience: h.issuer(tenant),
      key: keyed.key,
      kid: keyed.kid,
    });

    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        sendAssertion(h, tenant, keyed.account.client_id, assertion),
      ),
    );

    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(401)]);
  });

  // Every row has its header (jest reads a missing last argument as a `done` callback).
  const bad: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['has expired', { exp: now() - 60, iat: now() - 120 }, {}],
    ['expires more than five minutes ahead', { exp: now() + 3600 }, {}],
    ['is not valid before a time in the future', { nbf: now() + 600 }, {}],
    ['was issued in the future', { iat: now() + 600 }, {}],
    ['has no exp', { exp: undefined }, {}],
    ['has no jti', { jti: undefined }, {}],
    ["names another realm's issuer as aud", { aud: 'http://127.0.0.1:1/realms/other' }, {}],
    ['names the Plant Store as aud', { aud: 'http://plant-store.test' }, {}],
    ['has a sub other than the client_id', { sub: 'someone-else' }, {}],
    ['names a kid the account does not have', {}, { kid: 'not-a-key-of-it' }],
    ['has a crit header', {}, { crit: ['exp'] }],
  ];
  test.each(bad)(
    'When the assertion %s, then 401 invalid_client and no token',
    async (_case, claims, header) => {
      const res = await assertionGrant(h, tenant, shared, claims, header).expect(401);

      expect(res.body).toEqual(refused);
    },
  );

  test.each(['none', 'HS256'])(
    'When the assertion claims alg %s (signed with the public key as an HMAC secret), then 401 invalid_client',
    async (alg) => {
      const { account, key, kid } = shared;
      const signed = clientAssertion({
        clientId: account.client_id,
        audience: h.issuer(tenant),
        key,
        kid,
      });
      const [, payload] = signed.split('.');
      const signingInput = `${Buffer.from(JSON.stringify({ alg, kid })).toString('base64url')}.${payload}`;
      const mac = createHmac('sha256', key.publicPem).update(signingInput).digest('base64url');

      const res = await sendAssertion(
        h,
        tenant,
        account.client_id,
        `${signingInput}.${alg === 'none' ? '' : mac}`,
      ).expect(401);

      expect(res.body).toEqual(refused);
    },
  );

  test("When an assertion is signed with another account's key, then it does not authenticate this account", async () => {
    const mine = await keyedAccount(h, tenant);
    const other = await keyedAccount(h, tenant);

    const res = await assertionGrant(h, tenant, {
      account: mine.account,
      key: other.key,
      kid: other.kid,
    }).expect(401);
    const withMyKid = await assertionGrant(h, tenant, {
      account: mine.account,
      key: other.key,
      kid: mine.kid,
    }).expect(401);

    expect([res.body, withMyKid.body]).toEqual([refused, refused]);
  });

  test("When an account of another tenant holds the key, then its assertion authenticates nowhere but at that tenant's realm", async () => {
    const { tenant: other } = await h.createTenant();
    const keyed = await keyedAccount(h, other);
    const forOtherRealm = clientAssertion({
      clientId: keyed.account.client_id,
      audience: h.issuer(other),
      key: keyed.key,
      kid: keyed.kid,
    });
    const forThisRealm = clientAssertion({
      clientId: keyed.account.client_id,
      audience: h.issuer(tenant),
      key: keyed.key,
      kid: keyed.kid,
    });

    await sendAssertion(h, tenant, keyed.account.client_id, forOtherRealm).expect(401);
    await sendAssertion(h, tenant, keyed.account.client_id, forThisRealm).expect(401);
    await sendAssertion(h, other, keyed.account.client_id, forThisRealm).expect(401);
    await sendAssertion(h, other, keyed.account.client_id, forOtherRealm).expect(200);
  });

  const malformed: Array<[string, (clientId: string, assertion: string) => string]> = [
    [
      'a secret as well',
      (id, a) =>
        `grant_type=client_credentials&client_id=${id}&client_secret=x&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion=${a}`,
    ],
    [
      'the assertion twice',
      (id, a) =>
        `grant_type=client_credentials&client_id=${id}&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion=${a}&client_assertion=${a}`,
    ],
    [
      'another assertion type',
      (id, a) =>
        `grant_type=client_credentials&client_id=${id}&client_assertion_type=urn%3Aexample&client_assertion=${a}`,
    ],
    [
      'no assertion type',
      (id, a) => `grant_type=client_credentials&client_id=${id}&client_assertion=${a}`,
    ],
  ];
  test.each(malformed)(
    'When the request carries %s, then 400 invalid_request',
    async (_case, body) => {
      const keyed = shared;
      const assertion = clientAssertion({
        clientId: keyed.account.client_id,
        audience: h.issuer(tenant),
        key: keyed.key,
        kid: keyed.kid,
      });

      const res = await request(h.publicUrl)
        .post(h.tokenUrl(tenant))
        .type('form')
        .send(body(keyed.account.client_id, assertion))
        .expect(400);

      expect(res.body.error).toBe('invalid_request');
    },
  );

  test('When the assertion is garbage of every shape, then 401 invalid_client, never a 5xx', async () => {
    const keyed = shared;
    const shapes = [
      'x',
      'a.b.c',
      '..',
      `${'e30'}.${'e30'}.`,
      `${Buffer.from('[]').toString('base64url')}.e30.AA`,
      'e30.e30.AA'.repeat(3000),
      `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.bnVsbA.AA`,
    ];

    const statuses = [];
    for (const shape of shapes)
      statuses.push((await sendAssertion(h, tenant, keyed.account.client_id, shape)).status);

    expect(statuses).toEqual(shapes.map(() => 401));
  });

  test('When a token was minted with the key, then its claims say so nowhere but in the usual fields (no key material)', async () => {
    const res = await assertionGrant(h, tenant, shared).expect(200);

    expect(Object.keys(decodeJwt(res.body.access_token).payload).sort()).toEqual([
      'aud',
      'client_id',
      'cred',
      'exp',
      'grants',
      'iat',
      'iss',
      'jti',
      'principal_type',
      'role',
      'scope',
      'sub',
      'tenant',
      'ver',
    ]);
  });
});
