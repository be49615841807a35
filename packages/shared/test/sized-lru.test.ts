import { describe, expect, test } from '@jest/globals';
import { SizedLru } from '../src/util/index.js';

/** Values are their own size in bytes. */
const lru = (budget: number, evicted: string[] = []) =>
  new SizedLru<string, number>(
    budget,
    (bytes) => bytes,
    (key) => evicted.push(key),
  );

describe('SizedLru: least recently used, bounded by memory', () => {
  test('When entries are charged past the budget, then the least recently used go until the charges fit, and the counts say so', () => {
    const evicted: string[] = [];
    const cache = lru(100, evicted);
    cache.set('a', 40);
    cache.set('b', 40);
    cache.get('a');

    cache.set('c', 40);

    expect([cache.has('a'), cache.has('b'), cache.has('c')]).toEqual([true, false, true]);
    expect({ size: cache.size, bytes: cache.bytes, evictions: cache.evictions, evicted }).toEqual({
      size: 2,
      bytes: 80,
      evictions: 1,
      evicted: ['b'],
    });
  });

  test('When an entry is larger than the whole budget, then it is kept alone rather than dropped on arrival', () => {
    const cache = lru(100);
    cache.set('a', 10);

    cache.set('huge', 150);

    expect([cache.has('a'), cache.has('huge'), cache.bytes]).toEqual([false, true, 150]);
  });

  test('When peek reads an entry, then its recency is untouched; get makes it the most recent', () => {
    const cache = lru(80);
    cache.set('a', 40);
    cache.set('b', 40);

    cache.peek('a');
    cache.set('c', 40);
    expect([cache.has('a'), cache.has('b')]).toEqual([false, true]);
    cache.get('b');
    cache.set('d', 40);
    expect([cache.has('b'), cache.has('c'), cache.has('d')]).toEqual([true, false, true]);
  });

  test('When an entry grows and is resized, then it is charged anew and others make room; a replaced or deleted entry gives its charge back', () => {
    const sizes = new Map<string, number>([
      ['a', 10],
      ['b', 10],
    ]);
    const cache = new SizedLru<string, string>(50, (key) => sizes.get(key)!);
    cache.set('a', 'a');
    cache.set('b', 'b');

    sizes.set('b', 45);
    cache.resize('b');
    expect([cache.has('a'), cache.bytes]).toEqual([false, 45]);
    sizes.set('b', 5);
    cache.set('b', 'b');
    expect(cache.bytes).toBe(5);
    cache.delete('b');
    expect([cache.size, cache.bytes]).toEqual([0, 0]);
    expect(cache.full(51)).toBe(true);
    expect(cache.full(50)).toBe(false);
  });

  test('When the budget is not positive, then the cache refuses to exist', () => {
    expect(() => lru(0)).toThrow('budgetBytes must be positive');
  });
});
