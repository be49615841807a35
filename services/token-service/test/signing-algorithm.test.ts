/**
 * A realm's signing algorithm through the internal API: switching is a key rotation (new tokens
 * with a new key of the new type, the old key published until its tokens have expired),
 * idempotent, safe when requests race, and refused in the Error shape for anything but RS256
 * or ES256.
 */
import { createPublicKey } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { ADMIN_PASSWORD, basic, decodeJwt, useHarness, type Harness } from './helpers/harness.js';
import { AUTH, internal, type CreatedAccount } from './helpers/internal-client.js';
import { portalDriver } from './helpers/portal-driver.js';
import { realmJwks, tokenRequest, verifyToken } from './helpers/token-client.js';
import type { IdentityContext } from '../src/platform/index.js';
import type { NewSigningKey, SigningKeyRepository } from '../src/signing-keys/index.js';
import { rotateSigningKey, setSigningAlgorithm } from '../src/signing-keys/signing-keys.js';

let h: Harness;

useHarness((started) => {
  h = started;
});

const algorithmPath = (tenant: string) => `/internal/v1/realms/${tenant}/signing-algorithm`;
const setAlgorithm = (tenant: string, body: unknown) =>
  request(h.internalUrl)
    .put(algorithmPath(tenant))
    .set('authorization', AUTH)
    .send(body as object);

async function grant(tenant: string, account: CreatedAccount): Promise<string> {
  const res = await tokenRequest(h, tenant)
    .set('authorization', basic(account.client_id, account.secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

async function realmWithAccount(): Promise<{
  tenant: string;
  kid: string;
  account: CreatedAccount;
}> {
  const { tenant, kid } = await h.createTenant();
  return { tenant, kid, account: await internal(h).createServiceAccount(tenant) };
}

/**
 * The identity context with its next signing-key write held back: `reached` gives the key once
 * the caller has read the realm and generated it, and the write goes on (in the real
 * repository, under the realm's lock) after `release`. Later writes are not held. This is how a
 * test puts another change between one change's read and its write, in that order, every run.
 */
function holdNextKeyWrite(identity: IdentityContext): {
  identity: IdentityContext;
  reached: Promise<NewSigningKey>;
  release(): void;
} {
  const reached = Promise.withResolvers<NewSigningKey>();
  const released = Promise.withResolvers<void>();
  let holding = true;
  const signingKeys: SigningKeyRepository = {
    ...identity.signingKeys,
    async rotate(realm, key, guard) {
      if (holding) {
        holding = false;
        reached.resolve(key);
        await released.promise;
      }
      return identity.signingKeys.rotate(realm, key, guard);
    },
  };
  return {
    identity: { ...identity, signingKeys },
    reached: reached.promise,
    release: () => released.resolve(),
  };
}

describe('switching a realm to ES256 and back', () => {
  test('When a realm is set to ES256, then new tokens are ES256 with a new P-256 key, tokens signed before still verify, and discovery names ES256', async () => {
    const { tenant, kid: rsaKid, account } = await realmWithAccount();
    const before = await grant(tenant, account);

    const res = await setAlgorithm(tenant, { alg: 'ES256' });
    const after = await grant(tenant, account);
    const keys = await realmJwks(h, tenant);
    const shown = await request(h.internalUrl)
      .get(algorithmPath(tenant))
      .set('authorization', AUTH);
    const discovery = await request(h.publicUrl).get(
      `/realms/${tenant}/.well-known/openid-configuration`,
    );

    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      tenant,
      alg: 'ES256',
      kid: expect.any(String),
      rotated: true,
      retired: 1,
    });
    expect(decodeJwt(before).header).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: rsaKid });
    expect(decodeJwt(after).header).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: res.body.kid });
    expect(keys).toEqual([
      {
        kty: 'EC',
        crv: 'P-256',
        x: expect.any(String),
        y: expect.any(String),
        kid: res.body.kid,
        alg: 'ES256',
        use: 'sig',
      },
      { kty: 'RSA', n: expect.any(String), e: 'AQAB', kid: rsaKid, alg: 'RS256', use: 'sig' },
    ]);
    await expect(verifyToken(h, before, tenant)).resolves.toMatchObject({ sub: account.client_id });
    await expect(verifyToken(h, after, tenant)).resolves.toMatchObject({
      sub: account.client_id,
      tenant,
      ver: 1,
    });
    expect(shown.body).toEqual({ tenant, alg: 'ES256', kid: res.body.kid });
    expect(discovery.body.id_token_signing_alg_values_supported).toEqual(['ES256']);
  });

  test('When an ES256 realm is set back to RS256, then a new RSA key signs and both earlier keys stay published', async () => {
    const { tenant, kid: first, account } = await realmWithAccount();
    const es = await setAlgorithm(tenant, { alg: 'ES256' });
    const esToken = await grant(tenant, account);

    const rs = await setAlgorithm(tenant, { alg: 'RS256' });
    const rsToken = await grant(tenant, account);
    const discovery = await request(h.publicUrl).get(
      `/realms/${tenant}/.well-known/openid-configuration`,
    );

    expect(rs.body).toEqual({
      tenant,
      alg: 'RS256',
      kid: expect.any(String),
      rotated: true,
      retired: 1,
    });
    expect(rs.body.kid).not.toBe(first);
    expect(decodeJwt(rsToken).header).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: rs.body.kid });
    expect((await realmJwks(h, tenant)).map((k) => [k.kid, k.alg])).toEqual([
      [rs.body.kid, 'RS256'],
      [es.body.kid, 'ES256'],
      [first, 'RS256'],
    ]);
    await expect(verifyToken(h, esToken, tenant)).resolves.toMatchObject({
      sub: account.client_id,
    });
    await expect(verifyToken(h, rsToken, tenant)).resolves.toMatchObject({
      sub: account.client_id,
    });
    expect(discovery.body.id_token_signing_alg_values_supported).toEqual(['RS256']);
  });

  test('When an ES256 token is compared with an RS256 one of the same claims, then it is over 250 characters shorter (a 64-byte signature, not 256)', async () => {
    const { tenant, account } = await realmWithAccount();
    const rsToken = await grant(tenant, account);
    await setAlgorithm(tenant, { alg: 'ES256' });

    const esToken = await grant(tenant, account);

    expect(esToken.split('.')[2]).toHaveLength(86);
    expect(rsToken.split('.')[2]).toHaveLength(342);
    expect(rsToken.length - esToken.length).toBeGreaterThan(250);
  });
});

describe('signing in to an ES256 realm', () => {
  test('When a user signs in to the portal of a realm switched to ES256, then the ID token is ES256 under the published key, and userinfo takes the access token', async () => {
    const { tenant, adminEmail } = await h.createTenant();
    const switched = await setAlgorithm(tenant, { alg: 'ES256' });
    const { browser, startSignIn, completeSignIn, exchange } = portalDriver(h, tenant);
    const b = browser();
    const started = await startSignIn(b);

    const { callback } = await completeSignIn(b, started, adminEmail, ADMIN_PASSWORD);
    const tokens = await exchange(callback.searchParams.get('code')!, started.verifier);
    const userinfo = await request(h.publicUrl)
      .get(`/realms/${tenant}/protocol/openid-connect/userinfo`)
      .set('authorization', `Bearer ${tokens.body.access_token}`);
    const key = (await realmJwks(h, tenant)).find((k) => k.kid === switched.body.kid)!;

    expect(tokens.status).toBe(200);
    expect(decodeJwt(tokens.body.id_token).header).toEqual({
      alg: 'ES256',
      kid: switched.body.kid,
    });
    expect(
      jwt.verify(tokens.body.id_token, createPublicKey({ key: key as never, format: 'jwk' }), {
        algorithms: ['ES256'],
        audience: 'portal',
      }),
    ).toMatchObject({ email: adminEmail, tenant });
    expect(userinfo.status).toBe(200);
  });
});

describe('setting the algorithm a realm already has', () => {
  test('When the same algorithm is set again, then nothing rotates: same kid, same published keys', async () => {
    const { tenant, kid } = await realmWithAccount();
    const keys = await realmJwks(h, tenant);

    const res = await setAlgorithm(tenant, { alg: 'RS256' });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tenant, alg: 'RS256', kid, rotated: false, retired: 0 });
    expect(await realmJwks(h, tenant)).toEqual(keys);
  });

  test('When ten requests switch the realm to ES256 at once, then exactly one rotates and all answer its key', async () => {
    const { tenant, account } = await realmWithAccount();

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => setAlgorithm(tenant, { alg: 'ES256' })),
    );
    const keys = await realmJwks(h, tenant);

    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.filter((a) => a.body.rotated === true)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.kid))).toEqual(new Set([keys[0]!.kid]));
    expect(keys.map((k) => k.alg)).toEqual(['ES256', 'RS256']);
    expect(decodeJwt(await grant(tenant, account)).header.kid).toBe(keys[0]!.kid);
  });

  test("When the switch to ES256 commits between a plain rotation's read and its write, then the rotation does not undo it: it drops its RSA key and rotates to ES256", async () => {
    const { tenant, kid: first } = await realmWithAccount();
    const held = holdNextKeyWrite(h.service.identity);

    const rotation = rotateSigningKey(held.identity, tenant);
    const stale = await held.reached;
    const switched = await setAlgorithm(tenant, { alg: 'ES256' });
    held.release();
    const rotated = await rotation;

    expect(stale.publicJwk.alg).toBe('RS256');
    expect(switched.body).toMatchObject({ alg: 'ES256', rotated: true, retired: 1 });
    expect(rotated).toEqual({ tenant, kid: expect.any(String), alg: 'ES256', retired: 1 });
    expect((await realmJwks(h, tenant)).map((k) => [k.kid, k.alg])).toEqual([
      [rotated.kid, 'ES256'],
      [switched.body.kid, 'ES256'],
      [first, 'RS256'],
    ]);
  });

  test("When a plain rotation commits between the switch's read and its write, then the rotation keeps RS256 and the switch still goes ahead over it", async () => {
    const { tenant, kid: first } = await realmWithAccount();
    const held = holdNextKeyWrite(h.service.identity);

    const switching = setSigningAlgorithm(held.identity, tenant, 'ES256');
    const key = await held.reached;
    const rotated = await rotateSigningKey(h.service.identity, tenant);
    held.release();
    const switched = await switching;

    expect(rotated).toEqual({ tenant, kid: expect.any(String), alg: 'RS256', retired: 1 });
    expect(switched).toEqual({ tenant, alg: 'ES256', kid: key.kid, rotated: true, retired: 1 });
    expect((await realmJwks(h, tenant)).map((k) => [k.kid, k.alg])).toEqual([
      [key.kid, 'ES256'],
      [rotated.kid, 'RS256'],
      [first, 'RS256'],
    ]);
  });

  test('When plain rotations race a switch to ES256 freely, then, whatever the order, each stored key is the one its rotation reports and the realm ends on ES256', async () => {
    const { tenant, kid: first } = await realmWithAccount();

    // Which rotation commits before the switch is up to the scheduler: one that does keeps
    // RS256, one that does not rotates to ES256 (the two tests above). Only what holds in
    // every order is asserted here.
    const rotations = [
      rotateSigningKey(h.service.identity, tenant),
      rotateSigningKey(h.service.identity, tenant),
    ];
    const switched = await setAlgorithm(tenant, { alg: 'ES256' });
    const rotated = await Promise.all(rotations);
    const keys = await realmJwks(h, tenant);
    const shown = await request(h.internalUrl)
      .get(algorithmPath(tenant))
      .set('authorization', AUTH);

    expect(switched.body).toEqual({
      tenant,
      alg: 'ES256',
      kid: expect.any(String),
      rotated: true,
      retired: 1,
    });
    expect(rotated.map((r) => r.retired)).toEqual([1, 1]);
    // Nothing but these four keys was stored: a rotation that lost to the switch dropped its key.
    expect(new Map(keys.map((k) => [k.kid, k.alg]))).toEqual(
      new Map([
        [first, 'RS256'],
        [switched.body.kid, 'ES256'],
        ...rotated.map((r): [string, string] => [r.kid, r.alg]),
      ]),
    );
    expect(shown.body).toEqual({ tenant, alg: 'ES256', kid: keys[0]!.kid });
    expect([
      switched.body.kid,
      ...rotated.filter((r) => r.alg === 'ES256').map((r) => r.kid),
    ]).toContain(shown.body.kid);
  });
});

describe('refused input', () => {
  test.each<[string, unknown, string]>([
    ['HS256 (a shared-secret algorithm)', { alg: 'HS256' }, 'alg must be one of "RS256", "ES256"'],
    ['none', { alg: 'none' }, 'alg must be one of "RS256", "ES256"'],
    ['ES384', { alg: 'ES384' }, 'alg must be one of "RS256", "ES256"'],
    ['lower case es256', { alg: 'es256' }, 'alg must be one of "RS256", "ES256"'],
    ['no alg', {}, 'alg must be one of "RS256", "ES256"'],
    ['an array', [{ alg: 'ES256' }], 'body must be a JSON object'],
  ])(
    'When the body names %s, then 400 in the Error shape and the realm keeps its key',
    async (_what, body, message) => {
      const { tenant, kid } = await realmWithAccount();

      const res = await setAlgorithm(tenant, body);

      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { error: 400, message: expect.stringContaining(message) },
      });
      expect((await realmJwks(h, tenant)).map((k) => k.kid)).toEqual([kid]);
    },
  );

  test('When the realm does not exist, or its name is not a tenant name, then 404 in the Error shape for both methods', async () => {
    for (const tenant of ['no-such-realm-es', 'UPPER', 'a%00b']) {
      const put = await setAlgorithm(tenant, { alg: 'ES256' });
      const get = await request(h.internalUrl)
        .get(algorithmPath(tenant))
        .set('authorization', AUTH);

      expect([put.status, put.body.error, get.status, get.body.error]).toEqual([
        404, 404, 404, 404,
      ]);
    }
  });
});
