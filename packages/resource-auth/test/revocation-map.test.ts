import { describe, expect, test } from '@jest/globals';
import { RevocationMap } from '../src/revocation/revocation-map.js';
import type { LiveRevocationEntry, RevocationEntry } from '@plant/shared/token-service-client';

const entry = (version: number, deleted = false, sub = 'sa-1'): RevocationEntry => ({
  tenant: 'acme',
  sub,
  version,
  deleted,
});
const live = (version: number, deleted = false, sub = 'sa-1', ttl = 360): LiveRevocationEntry => ({
  ...entry(version, deleted, sub),
  ttl,
});

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

function stateOf(map: RevocationMap): string[] {
  return [1, 2, 3, 4, 5, 6, 7].map(
    (ver) => `${ver}:${map.verdict('acme', 'sa-1', ver)}/${map.verdict('acme', 'sa-2', ver)}`,
  );
}

describe('RevocationMap', () => {
  test('When a principal has no entry, then every ver is valid', () => {
    const map = new RevocationMap();
    expect([map.verdict('acme', 'sa-1', 1), map.verdict('acme', 'sa-1', 7)]).toEqual([
      'valid',
      'valid',
    ]);
    expect(map.size).toBe(0);
  });

  test('When a version is set, then a lower ver is revoked and an equal or higher one valid', () => {
    const map = new RevocationMap();
    map.apply(entry(3));
    expect([1, 2, 3, 4].map((ver) => map.verdict('acme', 'sa-1', ver))).toEqual([
      'revoked',
      'revoked',
      'valid',
      'valid',
    ]);
    expect(map.verdict('acme', 'sa-2', 1)).toBe('valid');
    expect(map.verdict('other', 'sa-1', 1)).toBe('valid');
  });

  test('When a principal is deleted, then every ver is revoked', () => {
    const map = new RevocationMap();
    map.apply(entry(2, true));
    expect([1, 2, 3, 100].map((ver) => map.verdict('acme', 'sa-1', ver))).toEqual([
      'revoked',
      'revoked',
      'revoked',
      'revoked',
    ]);
  });

  test('When the same facts arrive in any order or repeated, then the map ends the same (max wins, deleted sticky)', () => {
    const facts = [
      entry(3),
      entry(5),
      entry(4, true),
      entry(2, false, 'sa-2'),
      entry(6, false, 'sa-2'),
    ];
    const outcomes = new Set<string>();
    for (const order of permutations(facts)) {
      const map = new RevocationMap();
      for (const fact of [...order, ...order.slice(0, 2)]) map.apply(fact);
      outcomes.add(JSON.stringify(stateOf(map)));
    }
    expect([...outcomes]).toEqual([
      JSON.stringify([
        '1:revoked/revoked',
        '2:revoked/revoked',
        '3:revoked/revoked',
        '4:revoked/revoked',
        '5:revoked/revoked',
        '6:revoked/valid',
        '7:revoked/valid',
      ]),
    ]);
  });

  test('When a lower version or an undeleted entry arrives later, then it changes nothing and apply says so', () => {
    const map = new RevocationMap();
    expect(map.apply(entry(5, true))).toBe(true);
    expect(map.apply(entry(3))).toBe(false);
    expect(map.apply(entry(5))).toBe(false);
    expect(map.verdict('acme', 'sa-1', 9)).toBe('revoked');
  });

  test('When version 1 and not deleted arrives for an unknown principal, then nothing is stored', () => {
    const map = new RevocationMap();
    expect(map.apply(entry(1))).toBe(false);
    expect(map.size).toBe(0);
  });

  test('When a resync settles, then the events written before it was requested are dropped and those written during it stay', () => {
    const map = new RevocationMap();
    map.apply(entry(2 ** 40)); // forged before the resync
    map.apply(entry(5, true, 'sa-2')); // forged deletion before the resync
    const epoch = map.beginEpoch();
    map.apply(entry(9, false, 'sa-3')); // a real event the resync may predate

    map.merge([live(3), live(5, false, 'sa-2'), live(4, false, 'sa-3')], 0);
    map.settle(epoch);

    expect([map.verdict('acme', 'sa-1', 2), map.verdict('acme', 'sa-1', 3)]).toEqual([
      'revoked',
      'valid',
    ]);
    expect([map.verdict('acme', 'sa-2', 4), map.verdict('acme', 'sa-2', 5)]).toEqual([
      'revoked',
      'valid',
    ]);
    expect([map.verdict('acme', 'sa-3', 8), map.verdict('acme', 'sa-3', 9)]).toEqual([
      'revoked',
      'valid',
    ]);
    expect(map.size).toBe(4);
  });

  test('When a snapshot replaces the map, then what it does not list is gone and what it lists is held', () => {
    const map = new RevocationMap();
    map.merge([live(4, false, 'old'), live(2, true, 'old-deleted')], 0);

    map.replace([live(3)], 0);

    expect([
      map.verdict('acme', 'old', 1),
      map.verdict('acme', 'old-deleted', 1),
      map.verdict('acme', 'sa-1', 2),
    ]).toEqual(['valid', 'valid', 'revoked']);
    expect(map.size).toBe(1);
  });

  test('When an entry outlives its ttl, then expire drops it (no token it revokes can be live) and keeps the younger ones', () => {
    const map = new RevocationMap();
    map.merge([live(3, false, 'short', 10), live(4, true, 'long', 360)], 1000);
    map.merge([live(5, false, 'short', 20)], 2000);

    expect(map.expire(1000 + 19_999)).toBe(0);
    expect(map.expire(2000 + 20_000)).toBe(1);
    expect([map.verdict('acme', 'short', 1), map.verdict('acme', 'long', 9)]).toEqual([
      'valid',
      'revoked',
    ]);
    expect(map.expire(1000 + 360_000)).toBe(1);
    expect(map.size).toBe(0);
  });

  test('When entries fall due out of their arrival order, then each expire drops exactly those due and a pushed-back entry waits for its later time', () => {
    const map = new RevocationMap();
    // ttl in seconds, arrival order unrelated to due order; sub-7 is pushed back by a later change.
    const ttls = [50, 10, 40, 30, 20, 60, 5, 45];
    map.merge(
      ttls.map((ttl, i) => live(2, false, `sub-${i}`, ttl)),
      0,
    );
    map.merge([live(3, false, 'sub-6', 70)], 1000);

    const held = () =>
      ttls.filter((_, i) => map.verdict('acme', `sub-${i}`, 1) === 'revoked').length;
    expect([map.expire(9_999), held()]).toEqual([0, 8]); // sub-6's first time (5 s) has passed, but it was pushed back
    expect([map.expire(25_000), map.size]).toEqual([2, 6]); // sub-1 (10 s), sub-4 (20 s); not sub-6, pushed back to 71 s
    expect(map.verdict('acme', 'sub-6', 2)).toBe('revoked');
    expect([map.expire(60_000), map.size]).toEqual([5, 1]);
    expect([map.expire(71_000), map.size, held()]).toEqual([1, 0, 0]);
    expect(map.expire(1_000_000)).toBe(0);
  });

  test('When a snapshot replaces the map, then what was due from before it no longer drops what it lists', () => {
    const map = new RevocationMap();
    map.merge([live(2, false, 'sa-1', 10)], 0);
    map.replace([live(3, false, 'sa-1', 100)], 5_000);

    expect(map.expire(20_000)).toBe(0);
    expect(map.verdict('acme', 'sa-1', 2)).toBe('revoked');
    expect(map.expire(105_000)).toBe(1);
  });
});

describe('RevocationMap: credentials (decision 0035)', () => {
  const revoke = (credentials: string[], sub = 'sa-1', version = 1): RevocationEntry => ({
    tenant: 'acme',
    sub,
    version,
    deleted: false,
    credentials,
  });

  test('When a credential is revoked, then exactly its tokens are refused, the principal’s other credentials’ tokens stay valid, and a token naming none is refused', () => {
    const map = new RevocationMap();
    expect(map.apply(revoke(['secret:sec-old']))).toBe(true);

    expect(map.verdict('acme', 'sa-1', 1, 'secret:sec-old')).toBe('revoked');
    expect(map.verdict('acme', 'sa-1', 7, 'secret:sec-old')).toBe('revoked');
    expect(map.verdict('acme', 'sa-1', 1, 'secret:sec-new')).toBe('valid');
    expect(map.verdict('acme', 'sa-1', 1, 'key:k1')).toBe('valid');
    // Minted before tokens named their credential: it may have been the removed one.
    expect(map.verdict('acme', 'sa-1', 1)).toBe('revoked');
    expect(map.verdict('acme', 'sa-2', 1, 'secret:sec-old')).toBe('valid');
    expect(map.verdict('other', 'sa-1', 1, 'secret:sec-old')).toBe('valid');
  });

  test('When the same credential revocation arrives again, then apply says nothing changed', () => {
    const map = new RevocationMap();
    map.apply(revoke(['key:k1']));
    expect(map.apply(revoke(['key:k1']))).toBe(false);
    expect(map.apply(revoke(['key:k1', 'key:k2']))).toBe(true);
    expect(map.size).toBe(3);
  });

  test('When a forged event names another account’s credential, then that account is untouched and the forged fact goes at the next resync', () => {
    const map = new RevocationMap();
    const epoch = map.beginEpoch();
    // sa-2's secret named under sa-1: tokens of sa-1 never carry it, sa-2 is keyed apart.
    map.apply(revoke(['secret:sec-of-sa-2'], 'sa-1'));
    expect(map.verdict('acme', 'sa-2', 1, 'secret:sec-of-sa-2')).toBe('valid');
    expect(map.verdict('acme', 'sa-1', 1, 'secret:sec-of-sa-1')).toBe('valid');
    map.replace([], 0);
    map.settle(epoch + 1);
    expect(map.size).toBe(0);
  });

  test('When credential revocations come from the feed, then they expire with their entry: the map holds the changes of one horizon, not the history', () => {
    const map = new RevocationMap();
    for (let i = 0; i < 100; i += 1)
      map.merge([{ ...revoke([`secret:sec-${i}`], `sa-${i}`), ttl: 360 }], 0);
    map.merge([{ ...revoke(['key:late'], 'sa-late'), ttl: 360 }], 10_000);
    expect(map.size).toBe(202);
    expect(map.verdict('acme', 'sa-7', 1, 'secret:sec-7')).toBe('revoked');

    expect(map.expire(360_000)).toBe(200);
    expect(map.size).toBe(2);
    expect(map.verdict('acme', 'sa-7', 1, 'secret:sec-7')).toBe('valid');
    expect(map.verdict('acme', 'sa-late', 1, 'key:late')).toBe('revoked');
    map.expire(370_000);
    expect(map.size).toBe(0);
  });

  test('When a principal’s version and a credential are both revoked, then each holds on its own and both go together', () => {
    const map = new RevocationMap();
    map.merge([{ ...revoke(['trust:t1'], 'sa-1', 3), ttl: 10 }], 0);
    map.merge([{ ...entry(3), ttl: 20 }], 0);
    expect(map.verdict('acme', 'sa-1', 2, 'key:k')).toBe('revoked');
    expect(map.verdict('acme', 'sa-1', 3, 'trust:t1')).toBe('revoked');
    expect(map.verdict('acme', 'sa-1', 3, 'key:k')).toBe('valid');
    expect(map.expire(10_000)).toBe(0);
    expect(map.expire(20_000)).toBe(2);
  });
});
