/**
 * The key cache against the stand-in issuer's real HTTP routes (JWKS and realm list): what an
 * unsigned token can make it fetch, its bound, and the recency of what it keeps.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createLogger } from '@plant/shared/logging';
import { TokenServiceClient } from '@plant/shared/token-service-client';
import { startTestIssuer, uniqueName, type TestIssuer } from '@plant/test-kit';
import { FetchBudget } from '../src/bearer/fetch-budget.js';
import { JwksCache, jwksEntryBytes, type JwksCacheOptions } from '../src/bearer/jwks-cache.js';
import { RealmDirectory } from '../src/bearer/realm-directory.js';

let issuer: TestIssuer;
const closers: Array<() => void> = [];
const logger = createLogger({ name: 'jwks-cache-test', level: 'silent' });

beforeAll(async () => {
  issuer = await startTestIssuer();
});

afterAll(async () => {
  for (const close of closers) close();
  await issuer.close();
});

interface CacheOptions extends Partial<Omit<JwksCacheOptions, 'budget'>> {
  budget?: { burst: number; perSecond: number };
  /** Realm-list loads per second, one at once (each a list interval of 1000 / this ms). */
  listsPerSecond?: number;
}

/** A cache wired as createBearerAuth wires it, on the stand-in issuer. */
function cache({
  budget = { burst: 20, perSecond: 10 },
  listsPerSecond = 20,
  ...options
}: CacheOptions = {}) {
  // Generous timeouts: a fetch timed out on a busy machine would read as a refusal.
  const client = new TokenServiceClient({
    baseUrl: issuer.url,
    internalToken: 'test-internal-token',
    timeoutMs: 10_000,
  });
  const directory = new RealmDirectory({
    load: () => client.realms(),
    logger,
    loadBurst: 1,
    loadsPerSecond: listsPerSecond,
  });
  const jwks = new JwksCache({
    jwksBaseUrl: issuer.url,
    logger,
    directory,
    budget: new FetchBudget(budget.burst, budget.perSecond),
    fetchTimeoutMs: 10_000,
    ...options,
  });
  closers.push(() => {
    directory.close();
    jwks.close();
  });
  return { jwks, directory };
}

function realm(): { tenant: string; kid: string } {
  const tenant = uniqueName('k');
  return { tenant, kid: issuer.addRealm(tenant) };
}

describe('JwksCache: realms nobody created', () => {
  test('When 1,000 lookups name distinct unknown realms at once, then none costs a JWKS fetch and all share a couple of realm-list loads', async () => {
    const { jwks } = cache();
    const names = Array.from({ length: 1000 }, () => uniqueName('zz'));
    const listsBefore = issuer.realmListRequests();

    const lookups = await Promise.all(names.map((name) => jwks.getKey(name, randomUUID())));

    expect(new Set(lookups.map((l) => l.kind))).toEqual(new Set(['unknown-realm']));
    expect(names.reduce((sum, name) => sum + issuer.jwksRequests(name), 0)).toBe(0);
    expect(issuer.realmListRequests() - listsBefore).toBeLessThanOrEqual(2);
    expect(jwks.size).toBe(0);
  });

  test('When a realm is created after the list was loaded, then its first token waits for the next list and gets its key', async () => {
    const { jwks } = cache({ listsPerSecond: 3 });
    expect((await jwks.getKey(uniqueName('zz'), 'kid')).kind).toBe('unknown-realm');

    const { tenant, kid } = realm();
    const lookup = await jwks.getKey(tenant, kid);

    expect(lookup.kind).toBe('key');
    expect(issuer.jwksRequests(tenant)).toBe(1);
  });

  test('When a listed realm is deleted, then its 404 drops it, and its later tokens are decided by the realm list without a JWKS fetch', async () => {
    const { jwks, directory } = cache({ minRefetchMs: 0 });
    const { tenant, kid } = realm();
    expect((await jwks.getKey(tenant, kid)).kind).toBe('key');
    issuer.removeRealm(tenant);

    expect((await jwks.getKey(tenant, randomUUID())).kind).toBe('unknown-realm');
    expect({ cached: jwks.holds(tenant), listed: directory.has(tenant) }).toEqual({
      cached: false,
      listed: false,
    });
    expect((await jwks.getKey(tenant, kid)).kind).toBe('unknown-realm');
    expect(issuer.jwksRequests(tenant)).toBe(2);
  });

  test('When the realm list cannot be had, then an unknown realm is unavailable (503), never guessed unknown', async () => {
    const { jwks } = cache();
    issuer.setUnavailable(true);
    try {
      expect((await jwks.getKey(uniqueName('zz'), 'kid')).kind).toBe('unavailable');
    } finally {
      issuer.setUnavailable(false);
    }
  });
});

describe('JwksCache: made-up kids of real realms', () => {
  test('When many lookups with one unknown kid arrive at once, then the realm is refetched once', async () => {
    const { jwks } = cache({ minRefetchMs: 0 });
    const { tenant, kid } = realm();
    expect((await jwks.getKey(tenant, kid)).kind).toBe('key');

    const lookups = await Promise.all(
      Array.from({ length: 50 }, () => jwks.getKey(tenant, 'made-up')),
    );

    expect(new Set(lookups.map((l) => l.kind))).toEqual(new Set(['unknown-kid']));
    expect(issuer.jwksRequests(tenant)).toBe(2);
  });

  test('When made-up kids name many real realms, then the shared budget bounds the refetches in total, refused ones are unavailable, and known kids still verify', async () => {
    const { jwks } = cache({ minRefetchMs: 0, budget: { burst: 3, perSecond: 0.001 } });
    const realms = Array.from({ length: 8 }, realm);
    for (const { tenant, kid } of realms) expect((await jwks.getKey(tenant, kid)).kind).toBe('key');

    const lookups = [];
    for (let round = 0; round < 3; round += 1)
      for (const { tenant } of realms) lookups.push((await jwks.getKey(tenant, randomUUID())).kind);

    const refetches =
      realms.reduce((sum, { tenant }) => sum + issuer.jwksRequests(tenant), 0) - realms.length;
    expect(refetches).toBe(3);
    expect(lookups.filter((kind) => kind === 'unknown-kid')).toHaveLength(3);
    expect(lookups.filter((kind) => kind === 'unavailable')).toHaveLength(lookups.length - 3);
    for (const { tenant, kid } of realms) expect((await jwks.getKey(tenant, kid)).kind).toBe('key');
  });

  test('When a realm rotates its key, then the new kid is fetched once and verifies', async () => {
    const { jwks } = cache({ minRefetchMs: 0 });
    const { tenant, kid } = realm();
    expect((await jwks.getKey(tenant, kid)).kind).toBe('key');

    const rotated = issuer.addKey(tenant);

    expect((await jwks.getKey(tenant, rotated)).kind).toBe('key');
    expect((await jwks.getKey(tenant, kid)).kind).toBe('key');
    expect(issuer.jwksRequests(tenant)).toBe(2);
  });
});

describe('JwksCache: a key made a moment after the last fetch', () => {
  test('When a realm switches to ES256 within the refetch interval of its last fetch, then tokens of the new key wait for the interval, share one refetch, and verify with ES256 pinned', async () => {
    const { jwks } = cache({ minRefetchMs: 1_500 });
    const { tenant, kid } = realm();
    expect((await jwks.getKey(tenant, kid)).kind).toBe('key');

    const switched = issuer.addKey(tenant, 'ES256');
    const lookups = await Promise.all(
      Array.from({ length: 20 }, () => jwks.getKey(tenant, switched)),
    );

    expect(
      lookups.map((l) =>
        l.kind === 'key' ? [l.kind, l.key.alg, l.key.key.asymmetricKeyType] : [l.kind],
      ),
    ).toEqual(lookups.map(() => ['key', 'ES256', 'ec']));
    expect(issuer.jwksRequests(tenant)).toBe(2);
    const old = await jwks.getKey(tenant, kid);
    expect(old.kind === 'key' && old.key.alg).toBe('RS256');
  });

  test('When made-up kids arrive within the interval, then they wait for its end, cost one refetch together, and are unknown', async () => {
    const { jwks } = cache({ minRefetchMs: 1_000 });
    const { tenant, kid } = realm();
    expect((await jwks.getKey(tenant, kid)).kind).toBe('key');

    const lookups = await Promise.all(
      Array.from({ length: 30 }, () => jwks.getKey(tenant, randomUUID())),
    );

    expect(new Set(lookups.map((l) => l.kind))).toEqual(new Set(['unknown-kid']));
    expect(issuer.jwksRequests(tenant)).toBe(2);
  });
});

describe('JwksCache: bound and recency', () => {
  test('When more realms are used than the memory bound holds, then the cache never holds more, and the least recently USED realm goes, not the first fetched', async () => {
    const { jwks } = cache({ maxBytes: 3 * jwksEntryBytes(1) });
    const [a, b, c, d, e] = Array.from({ length: 5 }, realm) as Array<{
      tenant: string;
      kid: string;
    }>;
    for (const r of [a!, b!, c!]) await jwks.getKey(r.tenant, r.kid);

    await jwks.getKey(a!.tenant, a!.kid);
    await jwks.getKey(d!.tenant, d!.kid);

    expect([a, b, c, d].map((r) => jwks.holds(r!.tenant))).toEqual([true, false, true, true]);
    await jwks.getKey(e!.tenant, e!.kid);
    expect([a, b, c, d, e].map((r) => jwks.holds(r!.tenant))).toEqual([
      true,
      false,
      false,
      true,
      true,
    ]);
    expect(jwks.size).toBe(3);
    expect(jwks.stats()).toEqual({
      entries: 3,
      bytes: 3 * jwksEntryBytes(1),
      budgetBytes: 3 * jwksEntryBytes(1),
      evictions: 2,
    });
    expect((await jwks.getKey(a!.tenant, a!.kid)).kind).toBe('key');
    expect(issuer.jwksRequests(a!.tenant)).toBe(1);
  });

  test('When the cache is full, then first fetches spend the shared budget too, so cycling through real realms stays bounded', async () => {
    const { jwks } = cache({
      maxBytes: 2 * jwksEntryBytes(1),
      budget: { burst: 2, perSecond: 0.001 },
    });
    const realms = Array.from({ length: 6 }, realm);

    const kinds = [];
    for (const { tenant, kid } of realms) kinds.push((await jwks.getKey(tenant, kid)).kind);

    expect(kinds).toEqual(['key', 'key', 'key', 'key', 'unavailable', 'unavailable']);
    expect(jwks.size).toBe(2);
  });
});
