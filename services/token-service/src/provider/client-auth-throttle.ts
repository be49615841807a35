import type { Logger } from '@plant/shared';
import type { Redis } from 'ioredis';
import { errors } from 'oidc-provider';
import { ClientAuthFailureHints } from './client-auth-failure-hints.js';
import { grantRequestId } from './grant-request-id.js';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';

/** Where Retry-After goes (a Koa context), and whose request id a warning names. */
export interface HeaderSink {
  set(name: string, value: string): void;
  req?: unknown;
}

export interface ThrottleLimits {
  perClientIp: number;
  perIp: number;
  perClient: number;
  windowSeconds: number;
}

/** 429 in the token endpoint's own error format, with Retry-After. */
export class TooManyFailedAuthentications extends errors.OIDCProviderError {
  override error_description = 'too many failed client authentications; retry later';

  constructor() {
    super(429, 'too_many_requests');
  }
}

const PAIR_PREFIX = 'plantstore:auth-fail:client-ip';
const IP_PREFIX = 'plantstore:auth-fail:ip';
const CLIENT_PREFIX = 'plantstore:auth-fail:client';

function limiter(redis: Redis | undefined, keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
  const memory = new RateLimiterMemory({ keyPrefix, points, duration });
  if (!redis) return memory;
  // Redis down: count in memory rather than refuse every client (secrets carry 256 bits; throttling is a brake, not the lock).
  return new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration, insuranceLimiter: memory, rejectIfRedisNotReady: true });
}

/**
 * Failed client authentications, counted in Redis so every replica sees them.
 *  - per (client_id, IP): a guessing source is stopped for that client (429) before the secret is compared;
 *  - per IP, any client: a source spraying many clients is stopped;
 *  - per client_id, all IPs: above it a wrong secret is answered 429 instead of 401, but the
 *    secret is still compared and a right one passes: an attacker elsewhere never locks out the owner.
 * A success clears its (client_id, IP) counter.
 *
 * Every failure also counts against its IP, so an address with no recent failure anywhere
 * (`hints`, fed by every replica) has all its counters at zero: its grants skip the Redis
 * reads and the clearing. Failures are always counted in Redis.
 */
export class ClientAuthThrottle {
  readonly #pair: RateLimiterAbstract;
  readonly #ip: RateLimiterAbstract;
  readonly #client: RateLimiterAbstract;
  /** Addresses with recent failures; without Redis there is nothing to spare. */
  readonly hints: ClientAuthFailureHints | undefined;

  constructor(
    redis: Redis | undefined,
    private readonly limits: ThrottleLimits,
    private readonly logger: Logger,
  ) {
    this.#pair = limiter(redis, PAIR_PREFIX, limits.perClientIp, limits.windowSeconds);
    this.#ip = limiter(redis, IP_PREFIX, limits.perIp, limits.windowSeconds);
    this.#client = limiter(redis, CLIENT_PREFIX, limits.perClient, limits.windowSeconds);
    this.hints = redis
      ? new ClientAuthFailureHints(
          redis,
          [
            { prefix: IP_PREFIX, ipOf: (key) => key },
            // `<tenant>:<client_id>:<ip>`: tenant names and client ids hold no colon; IPv6 addresses do.
            { prefix: PAIR_PREFIX, ipOf: (key) => /^[^:]*:[^:]*:(.+)$/.exec(key)?.[1] },
          ],
          limits.windowSeconds * 1000,
          logger,
        )
      : undefined;
  }

  /** The counter, null when there is none, undefined when the store could not be asked. */
  async #read(limiter: RateLimiterAbstract, key: string, ctx: HeaderSink | undefined): Promise<RateLimiterRes | null | undefined> {
    try {
      return await limiter.get(key);
    } catch (err) {
      this.logger.warn({ ...grantRequestId(ctx), err: { message: (err as Error).message } }, 'throttle store unavailable');
      return undefined;
    }
  }

  static #wait(res: RateLimiterRes | null | undefined, points: number): number {
    return res != null && res.consumedPoints >= points ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : 0;
  }

  async #blockedFor(limiter: RateLimiterAbstract, key: string, points: number, ctx: HeaderSink | undefined): Promise<number> {
    return ClientAuthThrottle.#wait(await this.#read(limiter, key, ctx), points);
  }

  async #consume(limiter: RateLimiterAbstract, key: string, ctx?: HeaderSink): Promise<void> {
    try {
      await limiter.consume(key);
    } catch (rejection) {
      // A RateLimiterRes rejection only means the limit is now reached: that is what we count.
      if (rejection instanceof Error) this.logger.warn({ ...grantRequestId(ctx), err: { message: rejection.message } }, 'throttle store unavailable');
    }
  }

  static #retryAfter(ctx: HeaderSink | undefined, seconds: number): void {
    ctx?.set('Retry-After', String(seconds));
  }

  /**
   * True when no replica has seen this address fail within the window: its counters are all
   * zero, so `assertIpAllowed` and `assertAllowed` would pass without asking Redis. Callers
   * test it first so a clean grant does not wait on a promise at all.
   */
  isClean(ip: string): boolean {
    return this.hints?.isClean(ip) ?? false;
  }

  /** Before the token endpoint does anything: a source over its failure budget gets 429. */
  async assertIpAllowed(_tenant: string, ip: string, ctx: HeaderSink | undefined): Promise<void> {
    if (this.isClean(ip)) return;
    const wait = await this.#blockedFor(this.#ip, ip, this.limits.perIp, ctx);
    if (wait > 0) {
      ClientAuthThrottle.#retryAfter(ctx, wait);
      throw new TooManyFailedAuthentications();
    }
  }

  /**
   * Before comparing a secret. Resolves to whether this (client_id, IP) may have a failure
   * counter to clear on success (`recordSuccess`): false spares that write.
   */
  async assertAllowed(tenant: string, clientId: string, ip: string, ctx: HeaderSink | undefined): Promise<boolean> {
    if (this.isClean(ip)) return false;
    const counter = await this.#read(this.#pair, `${tenant}:${clientId}:${ip}`, ctx);
    const wait = ClientAuthThrottle.#wait(counter, this.limits.perClientIp);
    if (wait > 0) {
      ClientAuthThrottle.#retryAfter(ctx, wait);
      throw new TooManyFailedAuthentications();
    }
    return counter !== null;
  }

  /** After a right secret: forgets this source's failures for the client (when `assertAllowed` saw any). */
  recordSuccess(tenant: string, clientId: string, ip: string): void {
    this.#pair.delete(`${tenant}:${clientId}:${ip}`).catch(() => {});
  }

  async recordFailure(tenant: string, clientId: string, ip: string, ctx: HeaderSink | undefined): Promise<void> {
    this.hints?.recordFailure(ip);
    await Promise.all([this.#consume(this.#pair, `${tenant}:${clientId}:${ip}`, ctx), this.#consume(this.#ip, ip, ctx), this.#consume(this.#client, `${tenant}:${clientId}`, ctx)]);
    const wait = await this.#blockedFor(this.#client, `${tenant}:${clientId}`, this.limits.perClient, ctx);
    if (wait > 0) {
      ClientAuthThrottle.#retryAfter(ctx, wait);
      throw new TooManyFailedAuthentications();
    }
  }

  recordUnknownClient(_tenant: string, ip: string): void {
    this.hints?.recordFailure(ip);
    void this.#consume(this.#ip, ip);
  }
}

export type { RateLimiterRes };
