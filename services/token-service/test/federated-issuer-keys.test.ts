/**
 * The cache of trusted issuers' keys, against local issuers over real HTTP: what it keeps,
 * for how long, and its bound.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { hostileKeys, startWorkloadIssuer, type WorkloadIssuer } from '@plant/test-kit';
import { createFederatedIssuerKeys } from '../src/client-auth/federated-issuer-keys.js';
import { IssuerKeysUnavailable } from '../src/platform/errors.js';

const policy = { allowPrivate: true, allowHttp: true, timeoutMs: 1000 };
let issuers: WorkloadIssuer[];

beforeAll(async () => {
  issuers = await Promise.all([1, 2, 3].map(() => startWorkloadIssuer()));
});

afterAll(() => Promise.all(issuers.map((i) => i.close())));

describe("trusted issuers' keys", () => {
  test('When more issuers are asked for than the cache holds, then the oldest is dropped (and fetched again when asked again), the others are served from memory', async () => {
    const [a, b, c] = issuers as [WorkloadIssuer, WorkloadIssuer, WorkloadIssuer];
    const keys = createFederatedIssuerKeys(policy, { maxIssuers: 2 }, () => undefined);
    const before = [a, b, c].map((i) => i.requests().jwks);

    for (const issuer of [a, b, c, b, c]) await keys.keysFor(issuer.issuer, undefined);
    const afterThree = [a, b, c].map((i, n) => i.requests().jwks - before[n]!);
    await keys.keysFor(a.issuer, undefined);

    expect(afterThree).toEqual([1, 1, 1]);
    expect(a.requests().jwks - before[0]!).toBe(2);
  });

  test('When the issuer goes down, then the keys fetched before keep serving for a few lifetimes, then its tokens are refused, and each failed fetch is reported once per refetch period', async () => {
    const issuer = issuers[0]!;
    const failures: string[] = [];
    const keys = createFederatedIssuerKeys(
      policy,
      { ttlMs: 100, refetchMinMs: 50 },
      (_issuer, reason) => failures.push(reason),
    );
    // The cache's clock is the test's: "a few lifetimes" (six: 600 ms) is checked at exactly
    // 150 ms and 850 ms after the fetch, however long a loaded machine takes in between.
    let clock = Date.now();
    const now = jest.spyOn(Date, 'now').mockImplementation(() => clock);
    try {
      expect(await keys.keysFor(issuer.issuer, undefined)).toHaveLength(1);
      issuer.setMode('down');
      clock += 150;
      const duringOutage = await keys.keysFor(issuer.issuer, undefined);
      clock += 700;
      const later = await keys.keysFor(issuer.issuer, undefined).catch((err: unknown) => err);

      expect(duringOutage).toHaveLength(1);
      expect(later).toBeInstanceOf(IssuerKeysUnavailable);
      expect((later as Error).message).toBe('answered 503');
      expect(failures).toEqual(['answered 503', 'answered 503']);
    } finally {
      now.mockRestore();
      issuer.setMode('normal');
    }
  });

  test('When a token names a kid, then only that key is returned; an unknown kid right after a fetch returns none without fetching', async () => {
    const issuer = issuers[1]!;
    const keys = createFederatedIssuerKeys(policy, {}, () => undefined);
    const kid = issuer.rotateKey();
    await keys.keysFor(issuer.issuer, undefined);
    const fetched = issuer.requests().jwks;

    const named = await keys.keysFor(issuer.issuer, kid);
    const unknown = await keys.keysFor(issuer.issuer, 'not-a-kid');

    expect([named.length, unknown.length, issuer.requests().jwks - fetched]).toEqual([1, 0, 0]);
  });

  test('When the issuer publishes keys the key rule refuses (huge or even e, 8192 bits, P-384, P-521, Ed448) beside its own, then only its own is returned', async () => {
    const hostile = await startWorkloadIssuer();
    try {
      const names = hostileKeys().map(([name, jwk]) => {
        hostile.publishJwk({ ...jwk, kid: randomUUID() });
        return name;
      });
      const keys = createFederatedIssuerKeys(policy, {}, () => undefined);

      const returned = await keys.keysFor(hostile.issuer, undefined);

      expect(names.length).toBeGreaterThan(5);
      expect(
        returned.map((k) => [k.asymmetricKeyType, k.asymmetricKeyDetails?.namedCurve]),
      ).toEqual([['ec', 'prime256v1']]);
    } finally {
      await hostile.close();
    }
  });
});
