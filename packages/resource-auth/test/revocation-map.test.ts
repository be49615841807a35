import { describe, expect, test } from '@jest/globals';
import { RevocationMap } from '../src/revocation/revocation-map.js';
import type { RevocationEntry } from '@plant/shared';

const entry = (version: number, deleted = false, sub = 'sa-1'): RevocationEntry => ({ tenant: 'acme', sub, version, deleted });

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

function stateOf(map: RevocationMap): string[] {
  return [1, 2, 3, 4, 5, 6, 7].map((ver) => `${ver}:${map.verdict('acme', 'sa-1', ver)}/${map.verdict('acme', 'sa-2', ver)}`);
}

describe('RevocationMap', () => {
  test('When a principal has no entry, then every ver is valid', () => {
    const map = new RevocationMap();
    expect([map.verdict('acme', 'sa-1', 1), map.verdict('acme', 'sa-1', 7)]).toEqual(['valid', 'valid']);
    expect(map.size).toBe(0);
  });

  test('When a version is set, then a lower ver is revoked and an equal or higher one valid', () => {
    const map = new RevocationMap();
    map.apply(entry(3));
    expect([1, 2, 3, 4].map((ver) => map.verdict('acme', 'sa-1', ver))).toEqual(['revoked', 'revoked', 'valid', 'valid']);
    expect(map.verdict('acme', 'sa-2', 1)).toBe('valid');
    expect(map.verdict('other', 'sa-1', 1)).toBe('valid');
  });

  test('When a principal is deleted, then every ver is revoked', () => {
    const map = new RevocationMap();
    map.apply(entry(2, true));
    expect([1, 2, 3, 100].map((ver) => map.verdict('acme', 'sa-1', ver))).toEqual(['revoked', 'revoked', 'revoked', 'revoked']);
  });

  test('When the same facts arrive in any order or repeated, then the map ends the same (max wins, deleted sticky)', () => {
    const facts = [entry(3), entry(5), entry(4, true), entry(2, false, 'sa-2'), entry(6, false, 'sa-2')];
    const outcomes = new Set<string>();
    for (const order of permutations(facts)) {
      const map = new RevocationMap();
      for (const fact of [...order, ...order.slice(0, 2)]) map.apply(fact);
      outcomes.add(JSON.stringify(stateOf(map)));
    }
    expect([...outcomes]).toEqual([
      JSON.stringify(['1:revoked/revoked', '2:revoked/revoked', '3:revoked/revoked', '4:revoked/revoked', '5:revoked/revoked', '6:revoked/valid', '7:revoked/valid']),
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

  test('When a snapshot no longer lists an entry written before it was requested, then the sweep drops it; entries written during the load stay', () => {
    const map = new RevocationMap();
    map.apply(entry(2, true, 'old-deleted'));
    map.apply(entry(4, false, 'listed'));
    const epoch = map.beginEpoch();
    map.apply(entry(3, false, 'event-during-load'));
    map.apply(entry(4, false, 'listed'));
    expect(map.sweep(epoch)).toBe(1);
    expect(map.size).toBe(2);
    expect(map.verdict('acme', 'old-deleted', 2)).toBe('valid');
    expect(map.verdict('acme', 'event-during-load', 2)).toBe('revoked');
    expect(map.verdict('acme', 'listed', 3)).toBe('revoked');
  });

  test('When a snapshot is confirmed, then it replaces what was written before it was requested and joins what arrived during its load', () => {
    const map = new RevocationMap();
    map.apply(entry(2 ** 40)); // forged before the load
    map.apply(entry(5, true, 'sa-2')); // forged deletion before the load
    const epoch = map.beginEpoch();
    map.apply(entry(9, false, 'sa-3')); // a real event the snapshot may predate

    map.confirm(entry(3), epoch);
    map.confirm(entry(5, false, 'sa-2'), epoch);
    map.confirm(entry(4, false, 'sa-3'), epoch);

    expect([map.verdict('acme', 'sa-1', 2), map.verdict('acme', 'sa-1', 3)]).toEqual(['revoked', 'valid']);
    expect([map.verdict('acme', 'sa-2', 4), map.verdict('acme', 'sa-2', 5)]).toEqual(['revoked', 'valid']);
    expect([map.verdict('acme', 'sa-3', 8), map.verdict('acme', 'sa-3', 9)]).toEqual(['revoked', 'valid']);
  });
});
