import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startRedisServer, type RedisServer } from '@plant/test-kit';
import { Redis } from 'ioredis';
import { once } from 'node:events';
import { createGrantQuotaCounter } from '../src/quotas/grant-quota-counter.js';

// A redis-server of this file's own: `INFO commandstats` counts only this file's increments.
let server: RedisServer;
const clients: Redis[] = [];
/** A replica's connection, once ready: before that, the counter counts in memory (its fallback). */
const connect = async () => {
  const redis = new Redis(server.url);
  clients.push(redis);
  await redis.ping();
  return redis;
};

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await Promise.all(clients.filter((redis) => redis.status === 'ready').map((r) => r.quit()));
  await server.stop();
});

/** Increments sent to Redis since the server started: rate-limiter-flexible runs one script per increment (the commands inside it are counted apart). */
async function increments(): Promise<number> {
  const stats = await server.cli('INFO', 'commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm))
    calls += Number(match[1]);
  return calls;
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('Counting grants against a quota', () => {
  test('When one account is granted in a parallel burst on two replicas, then every grant gets its own place in the window, 1 to n, and the increments are fewer than the grants', async () => {
    const replicas = [
      createGrantQuotaCounter(await connect()),
      createGrantQuotaCounter(await connect()),
    ];
    const before = await increments();
    const burst = Array.from({ length: 200 }, (_, i) =>
      replicas[i % 2]!.count('tenant-a', 'sa-burst'),
    );
    const places = (await Promise.all(burst)).map((count) => count.consumed);
    expect(sorted(places)).toEqual(range(200));
    const made = (await increments()) - before;
    expect(made).toBeGreaterThanOrEqual(2);
    expect(made).toBeLessThan(200);
    expect(replicas.map((replica) => replica.inFlight())).toEqual([0, 0]);
  });

  test("When two accounts are granted at once, then each is counted on its own and neither waits on the other's count", async () => {
    const counter = createGrantQuotaCounter(await connect());
    const [a, b] = await Promise.all([
      Promise.all(range(30).map(() => counter.count('tenant-a', 'sa-one'))),
      Promise.all(range(30).map(() => counter.count('tenant-b', 'sa-one'))),
    ]);
    expect(sorted(a.map((c) => c.consumed))).toEqual(range(30));
    expect(sorted(b.map((c) => c.consumed))).toEqual(range(30));
    expect(counter.inFlight()).toBe(0);
  });

  test('When an account is granted alone, then its one grant is one increment, answered at once', async () => {
    const counter = createGrantQuotaCounter(await connect());
    const before = await increments();
    const first = await counter.count('tenant-a', 'sa-quiet');
    const second = await counter.count('tenant-a', 'sa-quiet');
    expect([first.consumed, second.consumed]).toEqual([1, 2]);
    expect(first.msBeforeNext).toBeGreaterThan(0);
    expect(first.msBeforeNext).toBeLessThanOrEqual(60_000);
    expect((await increments()) - before).toBe(2);
  });

  test('When Redis goes away mid-burst, then every grant still gets an answer (counted in memory) and nothing is left waiting', async () => {
    const own = await startRedisServer();
    // No reconnecting: the server is gone for good, and a retry timer would outlive the test.
    const redis = new Redis(own.url, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    clients.push(redis);
    await once(redis, 'ready');
    try {
      const counter = createGrantQuotaCounter(redis);
      await counter.count('tenant-a', 'sa-outage');
      const burst = range(40).map(() => counter.count('tenant-a', 'sa-outage'));
      await own.stop();
      const answers = await Promise.allSettled([
        ...burst,
        ...range(10).map(() => counter.count('tenant-a', 'sa-outage')),
      ]);
      expect(answers.filter((a) => a.status === 'rejected')).toEqual([]);
      expect(counter.inFlight()).toBe(0);
    } finally {
      await own.stop();
    }
  });
});
