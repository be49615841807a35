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
 * `plantstore:grant-quota:<tenant>:<client_id>`, one fixed window of 60 s each): every replica
 * counts into the same number with atomic increments, so a parallel burst is counted exactly.
 * The limit is each account's own, so the counter never refuses by itself: it answers each
 * grant's place in the window and the caller compares. Redis down: counted in this process's
 * memory (a quota per replica rather than none, or than refusing every grant).
 *
 * One increment per account in flight at a time (docs/decisions/0019-grant-quota-counts-coalesced.md):
 * the grants of an account that arrive while its increment is on its way to Redis wait for it,
 * then go together as one increment of their number. An increment is atomic, so the grants of
 * one are the consecutive places `total - n + 1 … total`, each exactly its own; a busy account
 * (the one a quota is for) pays one round trip per batch instead of one per grant, and a quiet
 * one pays one round trip, sent at the end of the event-loop turn its grant reached it in.
 */
export interface GrantQuotaCounter {
  count(realm: string, sub: string): Promise<QuotaCount>;
  /** Accounts with an increment in flight now (what the batching holds: it follows live grants). */
  inFlight(): number;
}

const KEY_PREFIX = 'plantstore:grant-quota';
const WINDOW_SECONDS = 60;
/** Far above any quota (at most 100,000 a minute): the limiter itself never rejects. */
const NEVER = 2 ** 31 - 1;

interface Waiter {
  resolve(count: QuotaCount): void;
  reject(err: unknown): void;
}

/** An account whose increment is in flight, and the grants that arrived since (the next batch). */
interface Flight {
  next: Waiter[];
}

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
  const flights = new Map<string, Flight>();

  async function increment(key: string, points: number): Promise<RateLimiterRes> {
    try {
      return await limiter.consume(key, points);
    } catch (err) {
      if (err instanceof RateLimiterRes) return err;
      throw err;
    }
  }

  /** Counts `batch` as one increment; then the grants that came meanwhile, until none wait. */
  function send(key: string, flight: Flight, batch: Waiter[]): void {
    increment(key, batch.length).then(
      ({ consumedPoints, msBeforeNext }) => {
        const first = consumedPoints - batch.length;
        for (const [i, waiter] of batch.entries())
          waiter.resolve({ consumed: first + i + 1, msBeforeNext });
        land(key, flight);
      },
      (err: unknown) => {
        for (const waiter of batch) waiter.reject(err);
        land(key, flight);
      },
    );
  }

  function land(key: string, flight: Flight): void {
    if (flight.next.length === 0) {
      flights.delete(key);
      return;
    }
    const batch = flight.next;
    flight.next = [];
    send(key, flight, batch);
  }

  return {
    count(realm, sub) {
      const key = `${realm}:${sub}`;
      return new Promise<QuotaCount>((resolve, reject) => {
        const waiter = { resolve, reject };
        const flight = flights.get(key);
        if (flight !== undefined) {
          flight.next.push(waiter);
          return;
        }
        // Sent at the end of this turn of the event loop: the account's other grants that
        // reach their count in the same turn (a burst read off many sockets at once) join it.
        const started: Flight = { next: [waiter] };
        flights.set(key, started);
        setImmediate(land, key, started);
      });
    },
    inFlight: () => flights.size,
  };
}
