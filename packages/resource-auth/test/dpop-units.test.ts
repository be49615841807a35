/** The pure parts of DPoP: the key's thumbprint, htu normalisation, nonce steps. */
import { describe, expect, test } from '@jest/globals';
import { dpopKey, jwkThumbprint } from '@plant/test-kit';
import { DpopNonces } from '../src/dpop/dpop-nonces.js';
import {
  importProofKey,
  ProofKeyCache,
  readProofKey,
  type ProofKey,
} from '../src/dpop/dpop-jwk.js';
import { normalisedHtu } from '../src/dpop/dpop-proof.js';

describe('DPoP key thumbprints (RFC 7638)', () => {
  test("When the key of RFC 9449's examples is read, then its thumbprint is the jkt those examples bind tokens to", () => {
    const jwk = {
      kty: 'EC',
      x: 'l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs',
      y: '9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA',
      crv: 'P-256',
    };
    expect(readProofKey(jwk, 'ES256')).toMatchObject({
      thumbprint: '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I',
    });
  });

  test.each(['ES256', 'EdDSA'] as const)(
    'When a fresh %s key carries extra members (kid, alg, use), then the thumbprint covers the required members only',
    (alg) => {
      const key = dpopKey(alg);
      const read = readProofKey({ ...key.jwk, kid: 'k1', alg, use: 'sig' }, alg);
      expect(read).toMatchObject({ thumbprint: jwkThumbprint(key.jwk) });
    },
  );
});

describe('DPoP htu normalisation', () => {
  test.each([
    ['https://API.example.test:443/a/./b/../c?x=1#f', 'https://api.example.test/a/c'],
    ['http://h.test:80/p', 'http://h.test/p'],
    ['http://h.test:8080/p', 'http://h.test:8080/p'],
  ])('When htu is %s, then it compares as %s', (htu, expected) => {
    expect(normalisedHtu(htu)).toBe(expected);
  });

  test.each(['whoami', 'ftp://h.test/p', 'javascript:alert(1)', ''])(
    'When htu is %j, then it names no URL of ours',
    (htu) => {
      expect(normalisedHtu(htu)).toBeUndefined();
    },
  );
});

describe('DPoP nonces', () => {
  test('When time moves on, then a nonce is current in its step, accepted but renewed in the next, and refused after', () => {
    let now = 1_000_000_000_000;
    const nonces = new DpopNonces(['nonce-key-0123456789abcdef'], () => now);
    const issued = nonces.current();
    expect(nonces.check(issued)).toBe('current');
    now += 60_000;
    expect({ verdict: nonces.check(issued), renewed: nonces.current() !== issued }).toEqual({
      verdict: 'previous',
      renewed: true,
    });
    now += 60_000;
    expect(nonces.check(issued)).toBe('invalid');
    expect(nonces.check(undefined)).toBe('invalid');
  });
});

describe('DPoP proof-key cache', () => {
  test('When more client headers verify than its bound, then the least recently used goes first and a lookup keeps an entry recent', () => {
    const cache = new ProofKeyCache(2);
    const entry = () => {
      const key = readProofKey(dpopKey().jwk, 'ES256') as ProofKey;
      return { key, object: importProofKey(key)! };
    };
    const [a, b, c] = [entry(), entry(), entry()];
    cache.remember('header-a', a);
    cache.remember('header-b', b);
    expect(cache.known('header-a')).toBe(a);
    cache.remember('header-c', c);
    expect({
      size: cache.size,
      a: cache.known('header-a'),
      b: cache.known('header-b'),
      c: cache.known('header-c'),
    }).toEqual({ size: 2, a, b: undefined, c });
  });
});
