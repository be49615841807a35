import { generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import { NodeSigningKey } from '../src/signing-keys/signing-key.js';

function rsaJwk(kid = 'unit-kid'): Record<string, unknown> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
}

function ecJwk(namedCurve = 'P-256', kid = 'unit-ec-kid'): Record<string, unknown> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' };
}

const DATA = Buffer.from('eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJzYSJ9');

describe('realm signing keys (oidc-provider external signing)', () => {
  test('When an RS256 key signs, then the signature is RSASSA-PKCS1-v1_5 SHA-256 under the published public key, and only that key is published', async () => {
    const jwk = rsaJwk();
    const key = new NodeSigningKey(jwk);

    const signature = await key.sign(DATA);

    expect(key.keyObject().type).toBe('public');
    expect(verify('sha256', DATA, key.keyObject(), signature)).toBe(true);
    expect(verify('sha256', Buffer.from('tampered'), key.keyObject(), signature)).toBe(false);
    expect({ kid: key.kid, alg: key.alg, use: key.use, kty: key.kty, n: key.n, e: key.e }).toEqual({
      kid: 'unit-kid',
      alg: 'RS256',
      use: 'sig',
      kty: 'RSA',
      n: jwk.n,
      e: jwk.e,
    });
    expect(Object.keys(key.keyObject().export({ format: 'jwk' })).sort()).toEqual([
      'e',
      'kty',
      'n',
    ]);
  });

  test('When an ES256 key signs, then the signature is the raw 64-byte r||s pair JOSE wants (not DER), under the published P-256 key', async () => {
    const jwk = ecJwk();
    const key = new NodeSigningKey(jwk);

    const signature = Buffer.from(await key.sign(DATA));

    expect(signature).toHaveLength(64);
    expect(
      verify('sha256', DATA, { key: key.keyObject(), dsaEncoding: 'ieee-p1363' }, signature),
    ).toBe(true);
    expect(
      verify(
        'sha256',
        Buffer.from('tampered'),
        { key: key.keyObject(), dsaEncoding: 'ieee-p1363' },
        signature,
      ),
    ).toBe(false);
    expect({
      kid: key.kid,
      alg: key.alg,
      use: key.use,
      kty: key.kty,
      crv: key.crv,
      x: key.x,
      y: key.y,
    }).toEqual({
      kid: 'unit-ec-kid',
      alg: 'ES256',
      use: 'sig',
      kty: 'EC',
      crv: 'P-256',
      x: jwk.x,
      y: jwk.y,
    });
    expect(Object.keys(key.keyObject().export({ format: 'jwk' })).sort()).toEqual([
      'crv',
      'kty',
      'x',
      'y',
    ]);
  });

  test('When the key has no kid, no supported alg, or is not the key type its alg needs, then it is refused at construction', () => {
    const { kid: _kid, ...withoutKid } = rsaJwk();

    expect(() => new NodeSigningKey(withoutKid)).toThrow('no kid');
    expect(() => new NodeSigningKey({ ...rsaJwk(), alg: undefined })).toThrow(
      'has no supported alg',
    );
    expect(() => new NodeSigningKey({ ...rsaJwk(), alg: 'PS256' })).toThrow('has no supported alg');
    expect(() => new NodeSigningKey({ ...ecJwk(), alg: 'RS256' })).toThrow('not a key for RS256');
    expect(() => new NodeSigningKey({ ...rsaJwk(), alg: 'ES256' })).toThrow('not a key for ES256');
    expect(() => new NodeSigningKey(ecJwk('P-384'))).toThrow('not a key for ES256');
  });
});
