import type { Logger } from '@plant/shared/logging';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';

export interface SignInFailureLimits {
  perAccountIp: number;
  perAccount: number;
  perIp: number;
  windowSeconds: number;
}

/** The counters of failed sign-ins: per address, per (account, address), per account. */
export type SignInCounter = 'ip' | 'accountIp' | 'account';

/** One point taken from a counter, which may be given back while the counter surely lives. */
export interface TakenPoint {
  readonly counter: SignInCounter;
  readonly key: string;
  /** Epoch ms before which the counter cannot have expired. */
  readonly liveUntil: number;
}

/** No point left in the counter until it expires. */
export interface NoPointLeft {
  readonly retryAfterSeconds: number;
}

/**
 * Failed sign-ins, counted in Redis (rate-limiter-flexible, keys `plantstore:signin-fail:<counter>:<key>`,
 * where an account is a keyed digest, never an email: sign-in-throttle.ts)
 * so every replica shares them, each over `windowSeconds` from its first point. A point is
 * taken atomically (one Lua script: increment, then compare) before the work it pays for, so
 * no burst can spend more than the limit. Keys expire with their window: Redis (and the
 * fallback's memory) holds at most the counters touched within the last window.
 *
 * Without Redis, or while it fails, the counters live in this process's memory (the limiter's
 * insurance): each replica then brakes on its own rather than refusing every sign-in.
 */
export interface SignInFailureRepository {
  take(counter: SignInCounter, key: string): Promise<TakenPoint | NoPointLeft>;
  /** Returns the point (its work was not done, or succeeded). */
  giveBack(point: TakenPoint): Promise<void>;
  /** Forgets the whole counter. */
  clear(point: TakenPoint): Promise<void>;
}

/**
 * A point is given back only while this much of its counter's window is left: a counter that
 * expired in between would be created again below zero, a budget beyond the limit.
 */
const GIVE_BACK_MARGIN_MS = 1000;

export function createSignInFailureRepository(
  redis: Redis | undefined,
  limits: SignInFailureLimits,
  logger: Logger,
  /** The counters' family: `signin-fail` (passwords), `factor-fail` (codes and passkeys). */
  family: 'signin-fail' | 'factor-fail' = 'signin-fail',
): SignInFailureRepository {
  const make = (name: SignInCounter, points: number): RateLimiterAbstract => {
    const keyPrefix = `plantstore:${family}:${name === 'accountIp' ? 'account-ip' : name}`;
    const memory = new RateLimiterMemory({ keyPrefix, points, duration: limits.windowSeconds });
    return redis
      ? new RateLimiterRedis({
          storeClient: redis,
          keyPrefix,
          points,
          duration: limits.windowSeconds,
          insuranceLimiter: memory,
          rejectIfRedisNotReady: true,
        })
      : memory;
  };
  const counters: Record<SignInCounter, RateLimiterAbstract> = {
    ip: make('ip', limits.perIp),
    accountIp: make('accountIp', limits.perAccountIp),
    account: make('account', limits.perAccount),
  };
  const storeFailed = (err: unknown) =>
    logger.warn({ err: { message: (err as Error).message } }, 'throttle store unavailable');

  return {
    async take(counter, key) {
      try {
        const res = await counters[counter].consume(key);
        return { counter, key, liveUntil: Date.now() + res.msBeforeNext - GIVE_BACK_MARGIN_MS };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes)
          return { retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
        // Neither Redis nor memory could count: guessing a password must not go unbudgeted.
        storeFailed(rejection);
        return { retryAfterSeconds: 1 };
      }
    },
    async giveBack(point) {
      if (Date.now() >= point.liveUntil) return;
      await counters[point.counter].reward(point.key).then(() => undefined, storeFailed);
    },
    async clear(point) {
      await counters[point.counter].delete(point.key).then(() => undefined, storeFailed);
    },
  };
}
