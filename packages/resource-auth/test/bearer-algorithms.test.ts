/**
 * RS256 and ES256 side by side: a token is checked with the algorithm its key's JWK declares,
 * never with the one its header claims alone. The attacker's tests: algorithm confusion both
 * ways, keys of another curve or malformed in the JWKS, a DER signature where JOSE wants r||s.
 */
import { beforeAll, describe, expect, test } from '@jest/globals';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { rsaJwk } from '@plant/test-kit';
import {
  invalidToken,
  issuer,
  newRealm,
  outcome,
  resourceServer,
  useTestIssuer,
  whoami,
  type Harness,
} from './bearer-support.js';

useTestIssuer();

let h: Harness;
beforeAll(async () => {
  h = await resourceServer();
});

const ALGORITHM_MISMATCH = 'Token algorithm does not match its signing key';

describe('ES256 realms', () => {
  test('When an ES256 realm token is sent, then it is accepted, and its key is fetched once for every later token of the realm', async () => {
    const tenant = newRealm('ES256');
    const tokens = Array.from({ length: 5 }, (_, i) =>
      issuer.mint({ tenant, claims: { sub: `sa-${i}`, client_id: `sa-${i}` } }),
    );

    const answers = [];
    for (const token of tokens) answers.push(await whoami(h, token));

    expect(answers.map((a) => [a.status, a.body.sub])).toEqual(
      tokens.map((_, i) => [200, `sa-${i}`]),
    );
    expect(issuer.jwksRequests(tenant)).toBe(1);
  });

  test('When a realm switches from RS256 to ES256, then tokens of both keys verify while both are published', async () => {
    const h2 = await resourceServer({ jwksMinRefetchMs: 0 });
    const tenant = newRealm('RS256');
    const rsToken = issuer.mint({ tenant });
    expect((await whoami(h2, rsToken)).status).toBe(200);

    const esKid = issuer.addKey(tenant, 'ES256');
    const esToken = issuer.mint({ tenant, kid: esKid });

    expect((await whoami(h2, esToken)).status).toBe(200);
    expect((await whoami(h2, rsToken)).status).toBe(200);
    expect(issuer.jwksRequests(tenant)).toBe(2);
  });
});

describe('algorithm confusion', () => {
  test.each<[string, 'RS256' | 'ES256', 'RS256' | 'ES256']>([
    ['an ES256 token names an RSA key', 'RS256', 'ES256'],
    ['an RS256 token names a P-256 key', 'ES256', 'RS256'],
  ])(
    'When %s, then 401 invalid_token before any signature check',
    async (_case, realmAlg, tokenAlg) => {
      const tenant = newRealm(realmAlg);

      // Signed correctly for the header's algorithm, by a key of that type: only the pin refuses it.
      const res = await whoami(h, issuer.mintWithOtherKey({ tenant, header: { alg: tokenAlg } }));

      expect(outcome(res)).toEqual(invalidToken(ALGORITHM_MISMATCH));
    },
  );

  test('When an RS256 or ES256 token is signed by the realm key of the other type through a mislabelled header, then it is refused too', async () => {
    const tenant = newRealm('ES256');
    const esKid = issuer.addRealm(tenant);
    const rsKid = issuer.addKey(tenant, 'RS256');

    const esSignedCalledRs = issuer.mint({ tenant, kid: esKid, header: { alg: 'RS256' } });
    const rsSignedCalledEs = issuer.mint({ tenant, kid: rsKid, header: { alg: 'ES256' } });

    expect(outcome(await whoami(h, esSignedCalledRs))).toEqual(invalidToken(ALGORITHM_MISMATCH));
    expect(outcome(await whoami(h, rsSignedCalledEs))).toEqual(invalidToken(ALGORITHM_MISMATCH));
    expect((await whoami(h, issuer.mint({ tenant, kid: esKid }))).status).toBe(200);
    expect((await whoami(h, issuer.mint({ tenant, kid: rsKid }))).status).toBe(200);
  });

  test.each<[string, () => string, string]>([
    [
      'HS256 with the P-256 public key as the secret',
      () => issuer.mintHs256WithPublicKey({ tenant: newRealm('ES256') }),
      'Token algorithm must be RS256 or ES256',
    ],
    [
      'ES384',
      () => issuer.mint({ tenant: newRealm('ES256'), header: { alg: 'ES384' } }),
      'Token algorithm must be RS256 or ES256',
    ],
    [
      'alg none on an ES256 realm',
      () => issuer.mintAlgNone({ tenant: newRealm('ES256') }),
      'Token algorithm must be RS256 or ES256',
    ],
    [
      'another P-256 key naming the realm kid',
      () => issuer.mintWithOtherKey({ tenant: newRealm('ES256') }),
      'Token signature is invalid',
    ],
  ])('When an ES256 realm gets %s, then 401 invalid_token', async (_case, token, description) => {
    expect(outcome(await whoami(h, token()))).toEqual(invalidToken(description));
  });
});

describe('signatures JOSE does not allow', () => {
  test('When an ES256 token carries its signature in DER (the form OpenSSL makes), then 401 invalid_token, never a 500', async () => {
    const tenant = newRealm('ES256');

    const res = await whoami(h, issuer.mintDerSignature({ tenant }));

    expect(outcome(res)).toEqual(invalidToken('Token is invalid'));
  });

  test.each<[string, (signature: Buffer) => Buffer]>([
    ['one byte short', (s) => s.subarray(0, 63)],
    ['one byte long', (s) => Buffer.concat([s, Buffer.from([0])])],
    ['empty', () => Buffer.alloc(0)],
    ['r and s swapped', (s) => Buffer.concat([s.subarray(32), s.subarray(0, 32)])],
    ['all zeros', () => Buffer.alloc(64)],
  ])('When an ES256 signature is %s, then 401 invalid_token', async (_case, mangle) => {
    const tenant = newRealm('ES256');
    const [head, body, signature] = issuer.mint({ tenant }).split('.') as [string, string, string];

    const res = await whoami(
      h,
      `${head}.${body}.${mangle(Buffer.from(signature, 'base64url')).toString('base64url')}`,
    );

    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });
});

describe('keys a JWKS may hold that verify nothing', () => {
  const p384 = () => ({
    ...generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'jwk' }),
    kid: randomUUID(),
    use: 'sig',
  });
  const p256 = () =>
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });

  test.each<[string, () => Record<string, unknown>]>([
    ['a P-384 key', () => p384()],
    ['a P-384 key that says ES256', () => ({ ...p384(), alg: 'ES256' })],
    ['a P-256 key that says RS256', () => ({ ...p256(), kid: randomUUID(), alg: 'RS256' })],
    ['a P-256 key with a short x', () => ({ ...p256(), x: 'AAAA', kid: randomUUID() })],
    [
      'a P-256 key whose point is off the curve',
      () => ({ ...p256(), y: Buffer.alloc(32, 1).toString('base64url'), kid: randomUUID() }),
    ],
    ['a P-256 key without y', () => ({ ...p256(), y: undefined, kid: randomUUID() })],
    ['a P-256 key whose x is a number', () => ({ ...p256(), x: 42, kid: randomUUID() })],
    ['an EC key without a curve', () => ({ ...p256(), crv: undefined, kid: randomUUID() })],
    ['a P-256 key for encryption', () => ({ ...p256(), kid: randomUUID(), use: 'enc' })],
    // The shared key rule: checks against these would cost milliseconds each.
    [
      'an RSA key whose e has 2047 bits',
      () => ({
        ...rsaJwk(
          Buffer.concat([Buffer.from([0x7f]), Buffer.alloc(255, 0xff)]).toString('base64url'),
        ),
        kid: randomUUID(),
        alg: 'RS256',
      }),
    ],
    [
      'an RSA key of 8192 bits',
      () => ({ ...rsaJwk('AQAB', 8192), kid: randomUUID(), alg: 'RS256' }),
    ],
  ])(
    'When the realm JWKS also holds %s, then a token naming it is refused as an unknown key, never a 500, and the realm key still verifies',
    async (_case, entry) => {
      const h2 = await resourceServer({ jwksMinRefetchMs: 60_000 });
      const tenant = newRealm('ES256');
      const jwk = entry();
      issuer.publishJwk(tenant, jwk);

      const named = await whoami(
        h2,
        issuer.mintWithOtherKey({
          tenant,
          header: { kid: jwk.kid ?? randomUUID(), alg: jwk.kty === 'RSA' ? 'RS256' : 'ES256' },
        }),
      );
      const real = await whoami(h2, issuer.mint({ tenant }));

      expect(outcome(named)).toEqual(invalidToken('Token signing key is not known'));
      expect(real.status).toBe(200);
    },
  );
});
