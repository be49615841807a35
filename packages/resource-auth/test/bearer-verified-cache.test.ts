/**
 * The verified-token cache: a token seen before skips the signature check and key lookup, but
 * never outlives its exp.
 */
import { describe, expect, test } from '@jest/globals';
import {
  invalidToken,
  issuer,
  newRealm,
  outcome,
  resourceServer,
  useTestIssuer,
  whoami,
} from './bearer-support.js';

useTestIssuer();

describe('Bearer verification: verified-token cache', () => {
  test('When the same token comes again, then it is not verified again (no key lookup), while a new token is', async () => {
    // Keys are treated as stale at once, so every full verification refetches the JWKS.
    const h = await resourceServer({ jwksMaxAgeMs: 0, jwksMinRefetchMs: 0 });
    const tenant = newRealm();
    const token = issuer.mint({ tenant });
    for (let i = 0; i < 3; i += 1) expect((await whoami(h, token)).status).toBe(200);
    expect(issuer.jwksRequests(tenant)).toBe(1);
    expect((await whoami(h, issuer.mint({ tenant }))).status).toBe(200);
    expect(issuer.jwksRequests(tenant)).toBe(2);
  });

  test('When the cache is disabled, then every request verifies the token in full', async () => {
    const h = await resourceServer({ jwksMaxAgeMs: 0, jwksMinRefetchMs: 0, verifiedCacheBytes: 0 });
    const tenant = newRealm();
    const token = issuer.mint({ tenant });
    for (let i = 0; i < 3; i += 1) expect((await whoami(h, token)).status).toBe(200);
    expect(issuer.jwksRequests(tenant)).toBe(3);
  });

  test('When a cached token reaches its exp, then it is refused', async () => {
    const h = await resourceServer({ clockToleranceSec: 0 });
    const tenant = newRealm();
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = issuer.mint({ tenant, claims: { exp } });
    expect((await whoami(h, token)).status).toBe(200);
    while (Date.now() < exp * 1000) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(outcome(await whoami(h, token))).toEqual(invalidToken('Token has expired'));
  });
});
