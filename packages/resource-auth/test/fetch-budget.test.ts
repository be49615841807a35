import { describe, expect, test } from '@jest/globals';
import { FetchBudget } from '../src/bearer/fetch-budget.js';

function clocked(burst: number, perSecond: number) {
  let now = 1_000_000;
  const budget = new FetchBudget(burst, perSecond, () => now);
  const takes = (n: number) => Array.from({ length: n }, () => budget.take());
  return { budget, takes, advance: (ms: number) => (now += ms) };
}

describe('FetchBudget (the refetches all realms share)', () => {
  test('When the burst is spent, then every further take is refused until time refills one', () => {
    const { takes, advance } = clocked(3, 2);

    expect(takes(5)).toEqual([true, true, true, false, false]);
    advance(499);
    expect(takes(1)).toEqual([false]);
    advance(1);
    expect(takes(2)).toEqual([true, false]);
  });

  test('When a flood takes without pause for ten seconds, then it gets the burst plus the rate times ten, not one per request', () => {
    const { budget, advance } = clocked(20, 10);
    let granted = 0;
    for (let ms = 0; ms < 10_000; ms += 1) {
      for (let i = 0; i < 5; i += 1) if (budget.take()) granted += 1;
      advance(1);
    }

    expect(granted).toBeLessThanOrEqual(20 + 10 * 10);
    expect(granted).toBeGreaterThanOrEqual(20 + 10 * 10 - 1);
  });

  test('When nothing is taken for a long time, then the budget holds the burst and no more', () => {
    const { takes, advance } = clocked(4, 100);

    advance(3_600_000);

    expect(takes(6)).toEqual([true, true, true, true, false, false]);
  });

  test('When the clock steps back, then nothing is refilled', () => {
    const { takes, advance } = clocked(1, 1);

    expect(takes(1)).toEqual([true]);
    advance(-60_000);
    expect(takes(1)).toEqual([false]);
    advance(999);
    expect(takes(1)).toEqual([false]);
    advance(1);
    expect(takes(1)).toEqual([true]);
  });
});
