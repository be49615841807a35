import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';

/** A window's count after this grant, and how long the window still runs. */
export interface QuotaCount {
  consumed: number;
  msBeforeNext: number;
}

/**
 * Grants per service account per minute, counted in Redis (rate-limiter-flexible, keys
 * `plantstore:grant-quota:<tenant>:<client_id>`, one fixed window of 60 s each): one atomic
 * increment per grant, so every replica counts into the same number and a parallel burst is
 * counted exactly. The limit is each account's own, so the counter never refuses by itself: it
 * answers the count and the caller compares. Redis down: counted in this process's memory (a
 * quota per replica rather than none, or than refusing every grant).
 */
export interface GrantQuotaCounter {
  count(realm: string, sub: string): Promise<QuotaCount>;
}

const KEY_PREFIX = 'plantstore:grant-quota';
const WINDOW_SECONDS = 60;
/** Far above any quota (at most 100,000 a minute): the limiter itself never rejects. */
const NEVER = 2 ** 31 - 1;

export function createGrantQuotaCounter(redis: Redis | undefined): GrantQuotaCounter {
  const memory = new RateLimiterMemory({
    keyPrefix: KEY_PREFIX,
    points: NEVER,
    duration: WINDOW_SECONDS,
  });
  const limiter: RateLimiterAbstract = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: KEY_PREFIX,
        points: NEVER,
        duration: WINDOW_SECONDS,
        insuranceLimiter: memory,
        rejectIfRedisNotReady: true,
      })
    : memory;
  return {
    async count(realm, sub) {
      let res: RateLimiterRes;
      try {
        res = await limiter.consume(`${realm}:${sub}`);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        res = err;
      }
      return { consumed: res.consumedPoints, msBeforeNext: res.msBeforeNext };
    },
  };
}
