import type { Logger } from '@plant/shared';
import type { Redis } from 'ioredis';

/** Where every replica announces a source address that just failed a client authentication. */
export const CLIENT_AUTH_FAILURE_CHANNEL = 'plantstore:client-auth-failures';

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
 * delivery time (well under a millisecond on a LAN): a failure on another replica that
 * lands within it is counted but not yet checked here.
 */
export class ClientAuthFailureHints {
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
      this.logger.warn({ err: { message: (err as Error).message } }, 'client auth failure hints not loaded; every grant asks Redis');
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
