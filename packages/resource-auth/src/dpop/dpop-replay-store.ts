/**
 * "jti never seen twice", across every replica (RFC 9449 §11.1): a proof's id is claimed with
 * one atomic `SET key 1 NX PX ttl` in Redis, so of two replicas that get the same proof at the
 * same moment exactly one accepts it. Failing closed: a claim that Redis does not confirm in time
 * (down, a timeout, a refused command) is an error, and the request gets 503, never a pass.
 *
 * A key lives only as long as its proof could be accepted (its `iat` plus the window), so the
 * store holds the proofs accepted within the last two windows at most: it follows the live
 * request rate, never the history. Keys are hashes of the claim (fixed size whatever the jti).
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../platform/logger.js';
import { createRedisClient, type RedisTarget } from '../platform/redis-client.js';
import { TimeoutError } from '../platform/with-timeout.js';

export interface DpopReplayStore {
  /** True when `id` had not been claimed within its lifetime (and now is); false for a replay. Rejects when the store cannot answer. */
  claim(id: string, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface RedisReplayStoreOptions {
  /**
   * A Redis URL or target (Sentinel too: a connection of the store's own, auto-pipelined, so the
   * claims of one event-loop round go out in one write) or an ioredis client to share (not
   * closed by `close`; give it `enableAutoPipelining` for the same batching).
   */
  redis: string | RedisTarget | Redis;
  /** Key prefix (default `plantstore:dpop-jti:`). */
  keyPrefix?: string;
  /** How long a claim may take before it counts as failed, ms (default 500). */
  timeoutMs?: number;
  logger?: Logger;
}

export function createRedisReplayStore(options: RedisReplayStoreOptions): DpopReplayStore {
  const given = options.redis;
  const own = !isRedisClient(given);
  // A claim made while the connection is (re)established waits for it, up to `timeoutMs`: the
  // first requests after a start are served, and a Redis that stays away costs each claim that
  // long before its 503. Each reconnection attempt fails what queued (maxRetriesPerRequest), so
  // the queue holds at most the claims of one retry interval.
  const redis = isRedisClient(given)
    ? given
    : createRedisClient(given, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  if (own)
    redis.on('error', (err: Error) =>
      options.logger?.warn({ err: { message: err.message } }, 'dpop replay store: redis error'),
    );
  const prefix = options.keyPrefix ?? 'plantstore:dpop-jti:';
  const timeoutMs = options.timeoutMs ?? 500;
  const deadlines = new ClaimDeadlines(timeoutMs);
  return {
    claim(id, ttlMs) {
      const key = prefix + createHash('sha256').update(id).digest('base64url');
      return deadlines
        .race(redis.set(key, '1', 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'))
        .then((answer) => answer === 'OK');
    },
    async close() {
      deadlines.close();
      if (own) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * The claims' time limit, kept by one sweep every fifth of it rather than a timer per claim
 * (a timer and a `Promise.race` per request are a measurable share of a claim's cost): a claim
 * Redis has not answered after `timeoutMs` (at most a fifth more) fails with a `TimeoutError`.
 */
interface PendingClaim {
  reject: (err: Error) => void;
  due: number;
}

class ClaimDeadlines {
  readonly #pending = new Set<PendingClaim>();
  #sweep: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  race<T>(answer: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry = { reject, due: performance.now() + this.timeoutMs };
      this.#pending.add(entry);
      this.#sweep ??= setInterval(() => this.#expire(), Math.max(1, this.timeoutMs / 5)).unref();
      answer.then(
        (value) => {
          this.#pending.delete(entry);
          resolve(value);
        },
        (err: unknown) => {
          this.#pending.delete(entry);
          reject(err);
        },
      );
    });
  }

  #expire(): void {
    if (this.#pending.size === 0) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
      return;
    }
    const now = performance.now();
    const overdue: PendingClaim[] = [];
    // Added in the order they fall due (a monotonic clock: a wall clock stepped back would break
    // that order): the first one not yet due ends the sweep.
    for (const entry of this.#pending) {
      if (entry.due > now) break;
      overdue.push(entry);
    }
    if (overdue.length === 0) return;
    // Decided in the check phase, after the sockets are read: when the process stalled (a
    // loaded machine, a GC pause), this timer runs before the event loop reads Redis' answers,
    // and a claim Redis answered in time would fail. One still unanswered then is refused.
    setImmediate(() => {
      for (const entry of overdue)
        if (this.#pending.delete(entry)) entry.reject(new TimeoutError('dpop jti claim'));
    });
  }

  close(): void {
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    for (const entry of this.#pending) entry.reject(new TimeoutError('dpop jti claim'));
    this.#pending.clear();
  }
}

function isRedisClient(value: string | RedisTarget | Redis): value is Redis {
  return typeof value === 'object' && typeof (value as Partial<Redis>).set === 'function';
}
