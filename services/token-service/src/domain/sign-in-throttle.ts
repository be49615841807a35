import type { Logger } from '@plant/shared';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface SignInLimits {
  perAccountIp: number;
  perIp: number;
  windowSeconds: number;
}

/**
 * Failed sign-ins, counted in Redis across replicas:
 *  - per account (tenant + lower-cased email) and IP: a guessing source is stopped for that account;
 *  - per account, all IPs: 10x the per-source limit, against distributed guessing of a password
 *    (passwords, unlike client secrets, are guessable; this can slow the owner during an attack);
 *  - per IP, any account: a source spraying accounts is stopped.
 * A success clears the (account, IP) counter.
 */
export class SignInThrottle {
  readonly #accountIp: RateLimiterAbstract;
  readonly #account: RateLimiterAbstract;
  readonly #ip: RateLimiterAbstract;

  constructor(
    redis: Redis | undefined,
    private readonly limits: SignInLimits,
    private readonly logger: Logger,
  ) {
    const make = (keyPrefix: string, points: number) => {
      const memory = new RateLimiterMemory({ keyPrefix, points, duration: limits.windowSeconds });
      return redis ? new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration: limits.windowSeconds, insuranceLimiter: memory, rejectIfRedisNotReady: true }) : memory;
    };
    this.#accountIp = make('plantstore:signin-fail:account-ip', limits.perAccountIp);
    this.#account = make('plantstore:signin-fail:account', limits.perAccountIp * 10);
    this.#ip = make('plantstore:signin-fail:ip', limits.perIp);
  }

  async #waitFor(limiter: RateLimiterAbstract, key: string, points: number): Promise<number> {
    try {
      const res = await limiter.get(key);
      return res !== null && res.consumedPoints >= points ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : 0;
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'throttle store unavailable');
      return 0;
    }
  }

  /** Seconds to wait before this account may be tried from this IP (0 = go ahead). */
  async retryAfter(tenant: string, email: string, ip: string): Promise<number> {
    const account = `${tenant}:${email.toLowerCase()}`;
    const waits = await Promise.all([
      this.#waitFor(this.#accountIp, `${account}:${ip}`, this.limits.perAccountIp),
      this.#waitFor(this.#account, account, this.limits.perAccountIp * 10),
      this.#waitFor(this.#ip, ip, this.limits.perIp),
    ]);
    return Math.max(...waits);
  }

  async recordFailure(tenant: string, email: string, ip: string): Promise<void> {
    const account = `${tenant}:${email.toLowerCase()}`;
    const consume = (limiter: RateLimiterAbstract, key: string) =>
      limiter.consume(key).then(
        () => undefined,
        (rejection: unknown) => {
          if (rejection instanceof Error) this.logger.warn({ err: { message: rejection.message } }, 'throttle store unavailable');
        },
      );
    await Promise.all([consume(this.#accountIp, `${account}:${ip}`), consume(this.#account, account), consume(this.#ip, ip)]);
  }

  recordSuccess(tenant: string, email: string, ip: string): void {
    this.#accountIp.delete(`${tenant}:${email.toLowerCase()}:${ip}`).catch(() => {});
  }
}
