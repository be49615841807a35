import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { addressKey } from './address-key.js';
import type { Logger } from '../logging/index.js';

export interface SourceBudgetLimits {
  /** Starts per source address (IPv6: its /64) per window. */
  perSource: number;
  /** Starts from all sources together per window, in each process. */
  total: number;
  windowSeconds: number;
}

/** No start left for this source, or for anyone, until the window ends. */
export interface OverBudget {
  readonly retryAfterSeconds: number;
}

/**
 * What an anonymous caller may make a service store before anyone has signed in (an
 * interaction row, a pending portal sign-in): each start takes a point BEFORE its state is
 * written, so the state held at any time is bounded by the budget over the state's lifetime,
 * per source and in total, whatever the callers do.
 */
export interface SourceBudget {
  take(ip: string): Promise<OverBudget | undefined>;
  /**
   * Whether this process already knows the source is over its budget (it was refused here, and
   * its window has not ended): a synchronous look at memory, for a refusal that must cost next
   * to nothing. Undefined does not mean a start is allowed: `take` decides that.
   */
  refused(ip: string): OverBudget | undefined;
}

/**
 * A source's counter lives in Redis (rate-limiter-flexible, keys `plantstore:<name>:<address>`,
 * each expiring with its window) so every replica shares it; a source that ran out is then
 * refused from this process's memory until its window ends, so a flood from one address costs
 * one map lookup per request, not a Redis round trip. Without Redis, or while it fails, the
 * source counters are this process's memory (the limiter's insurance): each replica bounds its
 * own callers rather than refusing everyone.
 *
 * The total is each process's own (memory): a total in Redis would be one key every start of
 * every replica writes, and its bound is as plain: replicas x `total`.
 *
 * The counters are fixed windows: at a window's edge up to twice a budget can be started within
 * one window's time, so state living a window holds at most twice the budget.
 */
export function createSourceBudget(
  redis: Redis | undefined,
  name: string,
  limits: SourceBudgetLimits,
  logger: Logger,
): SourceBudget {
  const keyPrefix = `plantstore:${name}`;
  const memory = new RateLimiterMemory({
    keyPrefix,
    points: limits.perSource,
    duration: limits.windowSeconds,
  });
  const perSource: RateLimiterAbstract = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        keyPrefix,
        points: limits.perSource,
        duration: limits.windowSeconds,
        insuranceLimiter: memory,
        rejectIfRedisNotReady: true,
        // Blocked in memory until the key's own expiry (no block duration given): the window's end, as Redis has it.
        inMemoryBlockOnConsumed: limits.perSource,
      })
    : memory;
  const total = new RateLimiterMemory({
    keyPrefix: `${keyPrefix}:total`,
    points: limits.total,
    duration: limits.windowSeconds,
  });

  async function spend(limiter: RateLimiterAbstract, key: string): Promise<OverBudget | undefined> {
    try {
      await limiter.consume(key);
      return undefined;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes)
        return { retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
      // Neither Redis nor memory could count: refuse for a moment rather than store without bound.
      logger.warn(
        { err: { message: (rejection as Error).message }, budget: name },
        'source budget store unavailable',
      );
      return { retryAfterSeconds: 1 };
    }
  }

  // The limiter's own in-memory block (untyped in its declarations, a plain method of its store limiters).
  const inMemoryBlock = perSource as unknown as {
    getInMemoryBlockMsBeforeExpire?(rlKey: string): number;
  };
  const blockedFor = (ip: string): number =>
    inMemoryBlock.getInMemoryBlockMsBeforeExpire?.(perSource.getKey(addressKey(ip))) ?? 0;

  return {
    refused(ip) {
      const ms = blockedFor(ip);
      return ms > 0 ? { retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) } : undefined;
    },
    async take(ip) {
      // The source first: a source over its budget spends nothing of everyone's.
      return (await spend(perSource, addressKey(ip))) ?? spend(total, 'all');
    },
  };
}

/**
 * Holds the answer to a refused source for `delayMs` before sending it, at most `maxHeld` at
 * once per process (beyond that, at once). A client that loops as fast as it is answered,
 * ignoring Retry-After, then gets at most one answer per connection per `delayMs`, and its
 * refusals cost a timer rather than the CPU that other callers' requests need. A client that
 * opens new connections instead is not slowed, but pays a socket for every request it holds.
 */
export function refusalDelay({
  delayMs,
  maxHeld,
}: {
  delayMs: number;
  maxHeld: number;
}): (res: { destroyed: boolean }, send: () => void) => void {
  let held = 0;
  return (res, send) => {
    if (delayMs <= 0 || held >= maxHeld) {
      send();
      return;
    }
    held += 1;
    setTimeout(() => {
      held -= 1;
      if (!res.destroyed) send();
    }, delayMs).unref();
  };
}
