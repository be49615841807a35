/**
 * The replay store's claim deadline on a stalled process: an answer Redis sent in time wins
 * over a deadline timer that fired late. On a loaded machine the test process itself is what
 * stalls (CPU starvation, a GC pause); the stall is made here by blocking the event loop.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { TEST_REDIS_URL, uniqueName } from '@plant/test-kit';
import { createRedisReplayStore } from '../src/index.js';

/** Blocks the event loop for `ms`: nothing runs, as when the machine gives the process no CPU. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

const prefix = `${uniqueName('deadline')}:`;
// A client of the test's own, so the claims start on a ready connection.
const redis = new Redis(TEST_REDIS_URL, { enableAutoPipelining: true });
const store = createRedisReplayStore({ redis, keyPrefix: prefix, timeoutMs: 50 });
beforeAll(() => once(redis, 'ready'));
afterAll(async () => {
  await store.close();
  redis.disconnect();
});

describe('a DPoP claim on a stalled process', () => {
  test('When Redis answers a claim in time but the process stalls past the deadline before reading it, then the claim succeeds, not a 503', async () => {
    const jti = uniqueName('jti');
    const claim = store.claim(jti, 60_000);
    // The claim goes out in the next check phase (auto-pipelining). Then the process stalls until
    // Redis has taken it (its answer is on the way, unread) and past the deadline.
    await new Promise((resolve) => setImmediate(resolve));
    const key = prefix + createHash('sha256').update(jti).digest('base64url');
    const exists = () =>
      execFileSync('redis-cli', ['-u', TEST_REDIS_URL, 'EXISTS', key]).toString().trim() === '1';
    while (!exists()) stall(1);
    stall(200);

    await expect(claim).resolves.toBe(true);
  });
});
