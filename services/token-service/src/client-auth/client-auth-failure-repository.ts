import { requestIdOf, type Logger } from '@plant/shared/logging';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  type RateLimiterAbstract,
  type RateLimiterRes,
} from 'rate-limiter-flexible';

/** Where every replica announces a source address that just failed a client authentication. */
export const CLIENT_AUTH_FAILURE_CHANNEL = 'plantstore:client-auth-failures';

export interface FailureLimits {
  perClientIp: number;
  perIp: number;
  perClient: number;
  windowSeconds: number;
}

/** The request a warning names (oidc-provider's request context is one). */
export interface LogSource {
  readonly req?: unknown;
}

export interface ClientIpFailures {
  /** Seconds this address stays blocked for the client; 0 when it is not. */
  blockedForSeconds: number;
  /** False only when the store answered that there are none (nothing to forget on a success). */
  mayExist: boolean;
}

/**
 * Failed client authentications, counted in Redis (rate-limiter-flexible, keys
 * `<prefix>:<key>`) so every replica sees them, per (client_id, IP), per IP and per client_id,
 * each over `windowSeconds`. Every failure counts against its IP, so an address no replica has
 * seen fail within the window has all its counters at zero: `isClean` says so from memory
 * (`hints`, fed by every replica) and spares the reads. Without Redis, or when it fails, the
 * counters live in this process's memory: a brake per replica rather than a refusal for all.
 */
export interface ClientAuthFailureRepository {
  isClean(ip: string): boolean;
  /** Seconds this address stays over its budget for every client (its failing attempts get 429); 0 when it is not. */
  ipBlockedFor(ip: string, source: LogSource): Promise<number>;
  clientIpFailures(
    realm: string,
    clientId: string,
    ip: string,
    source: LogSource,
  ): Promise<ClientIpFailures>;
  /** Seconds the client stays blocked for every address; 0 when it is not. */
  clientBlockedFor(realm: string, clientId: string, source: LogSource): Promise<number>;
  recordFailure(realm: string, clientId: string, ip: string, source: LogSource): Promise<void>;
  /** A failure with no client to count it against: the address only. */
  recordUnknownClient(ip: string, source: LogSource): void;
  forgetClientIp(realm: string, clientId: string, ip: string): void;
  /** Which addresses failed recently; undefined without Redis (nothing to spare). */
  readonly hints: FailureHints | undefined;
}

const CLIENT_IP_PREFIX = 'plantstore:auth-fail:client-ip';
const IP_PREFIX = 'plantstore:auth-fail:ip';
const CLIENT_PREFIX = 'plantstore:auth-fail:client';

function limiter(
  redis: Redis | undefined,
  keyPrefix: string,
  points: number,
  duration: number,
): RateLimiterAbstract {
  const memory = new RateLimiterMemory({ keyPrefix, points, duration });
  if (!redis) return memory;
  // Redis down: count in memory rather than refuse every client (secrets carry 256 bits; throttling is a brake, not the lock).
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration,
    insuranceLimiter: memory,
    rejectIfRedisNotReady: true,
  });
}

function waitOf(res: RateLimiterRes | null | undefined, points: number): number {
  return res != null && res.consumedPoints >= points
    ? Math.max(1, Math.ceil(res.msBeforeNext / 1000))
    : 0;
}

/** Reads and counts on a limiter; a store that cannot be asked is logged, never thrown. */
function counterAccess(logger: Logger) {
  function storeUnavailable(source: LogSource | undefined, err: Error): void {
    const reqId = requestIdOf(source?.req);
    logger.warn(
      { ...(reqId === undefined ? {} : { reqId }), err: { message: err.message } },
      'throttle store unavailable',
    );
  }

  /** The counter, null when there is none, undefined when the store could not be asked. */
  async function read(
    counter: RateLimiterAbstract,
    key: string,
    source: LogSource,
  ): Promise<RateLimiterRes | null | undefined> {
    try {
      return await counter.get(key);
    } catch (err) {
      storeUnavailable(source, err as Error);
      return undefined;
    }
  }

  async function consume(
    counter: RateLimiterAbstract,
    key: string,
    source: LogSource,
  ): Promise<void> {
    try {
      await counter.consume(key);
    } catch (rejection) {
      // A RateLimiterRes rejection only means the limit is now reached: that is what we count.
      if (rejection instanceof Error) storeUnavailable(source, rejection);
    }
  }

  return { read, consume };
}

export function createClientAuthFailureRepository(
  redis: Redis | undefined,
  limits: FailureLimits,
  logger: Logger,
): ClientAuthFailureRepository {
  const clientIp = limiter(redis, CLIENT_IP_PREFIX, limits.perClientIp, limits.windowSeconds);
  const ip = limiter(redis, IP_PREFIX, limits.perIp, limits.windowSeconds);
  const client = limiter(redis, CLIENT_PREFIX, limits.perClient, limits.windowSeconds);
  const hints = redis
    ? new FailureHints(
        redis,
        [
          { prefix: IP_PREFIX, ipOf: (key) => key },
          // `<tenant>:<client_id>:<ip>`: tenant names and client ids hold no colon; IPv6 addresses do.
          { prefix: CLIENT_IP_PREFIX, ipOf: (key) => /^[^:]*:[^:]*:(.+)$/.exec(key)?.[1] },
        ],
        limits.windowSeconds * 1000,
        logger,
      )
    : undefined;

  const { read, consume } = counterAccess(logger);

  return {
    hints,
    isClean: (address) => hints?.isClean(address) ?? false,
    async ipBlockedFor(address, source) {
      return waitOf(await read(ip, address, source), limits.perIp);
    },
    async clientIpFailures(realm, clientId, address, source) {
      const counter = await read(clientIp, `${realm}:${clientId}:${address}`, source);
      return { blockedForSeconds: waitOf(counter, limits.perClientIp), mayExist: counter !== null };
    },
    async clientBlockedFor(realm, clientId, source) {
      return waitOf(await read(client, `${realm}:${clientId}`, source), limits.perClient);
    },
    async recordFailure(realm, clientId, address, source) {
      hints?.recordFailure(address);
      await Promise.all([
        consume(clientIp, `${realm}:${clientId}:${address}`, source),
        consume(ip, address, source),
        consume(client, `${realm}:${clientId}`, source),
      ]);
    },
    recordUnknownClient(address, source) {
      hints?.recordFailure(address);
      void consume(ip, address, source);
    },
    forgetClientIp(realm, clientId, address) {
      clientIp.delete(`${realm}:${clientId}:${address}`).catch(() => {});
    },
  };
}

/** Past this many suspect addresses the hints stop being trusted (every grant asks Redis): memory stays bounded. */
const MAX_SUSPECTS = 100_000;

/**
 * Which source addresses failed a client authentication within the throttle window, on any
 * replica: lets a grant from an address with no recent failure skip the throttle's Redis
 * reads (its counters would all be zero). Redis stays the authority: every failure is
 * still counted there, and an address known to have failed is checked there as before.
 *
 * Hints are trusted only while they are complete: after a (re)subscription to the failure
 * channel they are rebuilt from the per-address counters in Redis, and until then, or when
 * the subscription drops, every grant is checked in Redis. What remains is the channel's
 * delivery time: a failure on another replica that lands within it is counted but not yet
 * checked here.
 */
export class FailureHints {
  readonly #suspects = new Map<string, number>();
  #live = false;
  #generation = 0;

  constructor(
    private readonly redis: Redis,
    /**
     * Redis key prefixes of the throttle's counters that name an address (rate-limiter-flexible
     * keys are `<prefix>:<key>`), each with how to find the address in its key.
     */
    private readonly counters: Array<{ prefix: string; ipOf(key: string): string | undefined }>,
    private readonly windowMs: number,
    private readonly logger: Logger,
  ) {}

  /** True when Redis need not be asked about this address. */
  isClean(ip: string): boolean {
    if (!this.#live) return false;
    const until = this.#suspects.get(ip);
    if (until === undefined) return true;
    if (until > Date.now()) return false;
    this.#suspects.delete(ip);
    return true;
  }

  /** A failure here: remember it and tell the other replicas. */
  recordFailure(ip: string): void {
    this.#mark(ip, Date.now() + this.windowMs);
    this.redis.publish(CLIENT_AUTH_FAILURE_CHANNEL, ip).catch((err: Error) => {
      this.logger.warn({ err: { message: err.message } }, 'client auth failure not announced');
    });
  }

  /** A failure announced on the channel (by any replica, this one included). */
  onAnnouncedFailure(ip: string): void {
    if (ip.length > 0 && ip.length <= 64) this.#mark(ip, Date.now() + this.windowMs);
  }

  /** The subscription dropped: announcements may be missed from now on. */
  suspend(): void {
    this.#live = false;
    this.#generation += 1;
  }

  /**
   * Call once the channel is subscribed: every address with a live counter in Redis becomes a
   * suspect for a whole window from now (no key lives longer: each was created before now),
   * then the hints are trusted. Announcements arriving meanwhile are kept.
   */
  async resync(): Promise<void> {
    this.suspend();
    const generation = this.#generation;
    try {
      for (const { prefix, ipOf } of this.counters) {
        let cursor = '0';
        do {
          const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          cursor = next;
          const until = Date.now() + this.windowMs;
          for (const key of keys) {
            const ip = ipOf(key.slice(prefix.length + 1));
            if (ip !== undefined) this.#mark(ip, until);
          }
        } while (cursor !== '0');
      }
      if (generation === this.#generation && this.#suspects.size <= MAX_SUSPECTS) this.#live = true;
    } catch (err) {
      this.logger.warn(
        { err: { message: (err as Error).message } },
        'client auth failure hints not loaded; every grant asks Redis',
      );
    }
  }

  #mark(ip: string, until: number): void {
    const previous = this.#suspects.get(ip);
    if (previous === undefined || previous < until) this.#suspects.set(ip, until);
    if (this.#suspects.size > MAX_SUSPECTS) this.#prune();
  }

  #prune(): void {
    const now = Date.now();
    for (const [ip, until] of this.#suspects) if (until <= now) this.#suspects.delete(ip);
    if (this.#suspects.size > MAX_SUSPECTS) {
      // Too many to keep: Redis answers every grant until a later resync finds fewer.
      this.suspend();
      this.#suspects.clear();
      setTimeout(() => void this.resync(), this.windowMs).unref();
    }
  }
}
