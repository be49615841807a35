import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { createLogger } from '../src/logging/index.js';
import { createSourceBudget, refusalDelay } from '../src/security/index.js';

/** The test Redis (as @plant/test-kit names it; this package comes before the test kit). */
const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = createLogger({ name: 'source-budget-test', level: 'silent' });
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
  await redis.ping();
});

afterAll(async () => {
  await redis.quit();
});

/** A budget of its own (its Redis keys outlive a run) and an address of its own. */
const uniqueBudget = () => `test-budget-${randomBytes(6).toString('hex')}`;
const uniqueIp = () => `10.${randomBytes(3).join('.')}`;

describe('a budget of starts per source and in total', () => {
  test('When 20 starts from one address are taken at once on two replicas, then exactly its 5 pass, and each replica then knows from its memory alone that the source is refused', async () => {
    const name = uniqueBudget();
    const [a, b] = [
      createSourceBudget(redis, name, { perSource: 5, total: 1000, windowSeconds: 60 }, logger),
      createSourceBudget(redis, name, { perSource: 5, total: 1000, windowSeconds: 60 }, logger),
    ];
    const ip = uniqueIp();

    const all = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).take(ip)),
    );

    expect(all.filter((r) => r === undefined)).toHaveLength(5);
    expect(
      all
        .filter((r) => r !== undefined)
        .every((r) => r!.retryAfterSeconds >= 1 && r!.retryAfterSeconds <= 60),
    ).toBe(true);
    expect([a.refused(ip), b.refused(ip)]).toEqual([
      { retryAfterSeconds: expect.any(Number) },
      { retryAfterSeconds: expect.any(Number) },
    ]);
    expect(a.refused(uniqueIp())).toBeUndefined();
  });

  test('When IPv6 sources of one /64 start, then they share one budget', async () => {
    const budget = createSourceBudget(
      redis,
      uniqueBudget(),
      { perSource: 2, total: 1000, windowSeconds: 60 },
      logger,
    );
    const prefix = `2001:db8:${randomBytes(2).toString('hex')}:1`;

    const all = [];
    for (let i = 1; i <= 4; i += 1) all.push(await budget.take(`${prefix}::${i}`));

    expect(all.map((r) => r === undefined)).toEqual([true, true, false, false]);
  });

  test('When many sources start more than the total, then the extra starts are refused, and a refused source spends nothing of the total', async () => {
    const budget = createSourceBudget(
      redis,
      uniqueBudget(),
      { perSource: 1, total: 3, windowSeconds: 60 },
      logger,
    );
    const busy = uniqueIp();
    await budget.take(busy);
    for (let i = 0; i < 5; i += 1) await budget.take(busy);

    const others = [];
    for (let i = 0; i < 3; i += 1) others.push(await budget.take(uniqueIp()));

    expect(others.map((r) => r === undefined)).toEqual([true, true, false]);
  });
});

describe('refusals held before they are sent', () => {
  test('When more refusals are held than the bound, then the extra ones are sent at once and the held ones later; a closed connection gets nothing', async () => {
    const hold = refusalDelay({ delayMs: 50, maxHeld: 2 });
    const sent: string[] = [];
    const closed = { destroyed: false };

    hold(closed, () => sent.push('first'));
    hold({ destroyed: false }, () => sent.push('second'));
    hold({ destroyed: false }, () => sent.push('third'));
    closed.destroyed = true;

    expect(sent).toEqual(['third']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent).toEqual(['third', 'second']);
  });
});
