import { generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import { Rs256SigningKey } from '../src/provider/rs256-signing-key.js';

function rsaJwk(kid = 'unit-kid'): Record<string, unknown> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
}

describe('RS256 signing key (oidc-provider external signing)', () => {
  test('When data is signed, then the signature is RSASSA-PKCS1-v1_5 SHA-256 under the published public key, and only that key is published', async () => {
    const jwk = rsaJwk();
    const key = new Rs256SigningKey(jwk);
    const data = Buffer.from('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzYSJ9');

    const signature = await key.sign(data);

    expect(key.keyObject().type).toBe('public');
    expect(verify('sha256', data, key.keyObject(), signature)).toBe(true);
    expect(verify('sha256', Buffer.from('tampered'), key.keyObject(), signature)).toBe(false);
    expect({ kid: key.kid, alg: key.alg, use: key.use, kty: key.kty, n: key.n, e: key.e }).toEqual({ kid: 'unit-kid', alg: 'RS256', use: 'sig', kty: 'RSA', n: jwk.n, e: jwk.e });
    expect(Object.keys(key.keyObject().export({ format: 'jwk' })).sort()).toEqual(['e', 'kty', 'n']);
  });

  test('When the key has no kid or is not RSA, then it is refused at construction', () => {
    const { kid: _kid, ...withoutKid } = rsaJwk();
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

    expect(() => new Rs256SigningKey(withoutKid)).toThrow('no kid');
    expect(() => new Rs256SigningKey({ ...privateKey.export({ format: 'jwk' }), kid: 'ec' })).toThrow('not an RSA key');
  });
});
