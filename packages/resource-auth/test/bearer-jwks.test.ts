/**
 * Bearer verification through the realm keys (JWKS) it fetches from the token service: rotation,
 * how often an unknown kid or realm may cost a fetch, and what a token service outage does.
 */
import { describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { uniqueName } from '@plant/test-kit';
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

describe('Bearer verification: JWKS cache', () => {
  test('When a realm rotates to a new key, then a token with the unknown kid triggers one refetch and is accepted', async () => {
    const h = await resourceServer({ jwksMinRefetchMs: 0 });
    const tenant = newRealm();
    expect((await whoami(h, issuer.mint({ tenant }))).status).toBe(200);
    expect(issuer.jwksRequests(tenant)).toBe(1);
    const newKid = issuer.addKey(tenant);
    const res = await whoami(h, issuer.mint({ tenant, kid: newKid }));
    expect(res.status).toBe(200);
    expect(issuer.jwksRequests(tenant)).toBe(2);
  });

  test('When many tokens name unknown kids within the refetch interval, then the realm is fetched only once', async () => {
    const h = await resourceServer({ jwksMinRefetchMs: 60_000 });
    const tenant = newRealm();
    expect((await whoami(h, issuer.mint({ tenant }))).status).toBe(200);
    for (let i = 0; i < 5; i += 1) {
      const res = await whoami(h, issuer.mint({ tenant, header: { kid: randomUUID() } }));
      expect(outcome(res)).toEqual(invalidToken('Token signing key is not known'));
    }
    expect(issuer.jwksRequests(tenant)).toBe(1);
  });

  test('When many requests of a new realm arrive at once, then they share one JWKS fetch', async () => {
    const h = await resourceServer();
    const tenant = newRealm();
    const results = await Promise.all(
      Array.from({ length: 12 }, () => whoami(h, issuer.mint({ tenant }))),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    expect(issuer.jwksRequests(tenant)).toBe(1);
  });

  test('When a realm is unknown (not in the realm list), then its tokens are refused and its JWKS is never asked for', async () => {
    const h = await resourceServer({ realmListBurst: 1, realmListPerSecond: 20 });
    const unknown = uniqueName('nx');
    for (let i = 0; i < 3; i += 1) {
      expect(outcome(await whoami(h, issuer.mint({ tenant: unknown })))).toEqual(
        invalidToken('Token issuer is not a known realm'),
      );
    }
    expect(issuer.jwksRequests(unknown)).toBe(0);
  });

  test('When tokens of unknown realms also fail a check that needs no key (audience, expiry, type), then neither the realm list nor a JWKS is asked for', async () => {
    const h = await resourceServer();
    const unknown = uniqueName('nx');
    const listsBefore = issuer.realmListRequests();
    const cases: Array<[string, string]> = [
      [
        issuer.mint({ tenant: unknown, claims: { aud: 'http://account-admin.test' } }),
        'Token audience is not accepted',
      ],
      [
        issuer.mint({ tenant: unknown, claims: { aud: ['http://account-admin.test'] } }),
        'Token audience is not accepted',
      ],
      [
        issuer.mint({ tenant: unknown, claims: { aud: undefined } }),
        'Token audience is not accepted',
      ],
      [issuer.mintExpired({ tenant: unknown }), 'Token has expired'],
      [issuer.mint({ tenant: unknown, header: { typ: 'JWT' } }), 'Token type must be at+jwt'],
    ];

    for (const [token, description] of cases)
      expect(outcome(await whoami(h, token))).toEqual(invalidToken(description));

    expect({
      jwks: issuer.jwksRequests(unknown),
      lists: issuer.realmListRequests() - listsBefore,
    }).toEqual({ jwks: 0, lists: 0 });
  });

  test('When the token service is down, then new realms get 503 and realms with cached keys keep working', async () => {
    const h = await resourceServer({ jwksMinRefetchMs: 0 });
    const known = newRealm();
    expect((await whoami(h, issuer.mint({ tenant: known }))).status).toBe(200);
    issuer.setUnavailable(true);
    try {
      const fresh = newRealm();
      const res = await whoami(h, issuer.mint({ tenant: fresh }));
      expect({
        status: res.status,
        retryAfter: res.headers['retry-after'],
        body: res.body,
      }).toEqual({
        status: 503,
        retryAfter: '1',
        body: { error: 503, message: 'Token verification is temporarily unavailable' },
      });
      expect(
        (await whoami(h, issuer.mint({ tenant: known, claims: { sub: 'another' } }))).status,
      ).toBe(200);
    } finally {
      issuer.setUnavailable(false);
    }
  });
});
