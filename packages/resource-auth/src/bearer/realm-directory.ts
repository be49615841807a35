/**
 * The realms that exist, as the token service lists them (`GET /internal/v1/realms`), so that a
 * token naming any other realm is refused without a call of its own.
 *
 * Why a list rather than a negative cache per realm: a realm name costs an attacker nothing, so
 * every forged token can name a new one and per-name memory never hits; one list answers for
 * every name at once, and its size follows the realms that exist, not the names tokens carried.
 *
 * Why loaded on a miss rather than on a timer: a realm created a moment ago must work for its
 * first token. A name the list lacks is therefore decided only by a list *requested after the
 * token arrived*: a token is minted after its realm was committed, so that list names the realm
 * if it exists. Loads run one at a time and spend from a budget (`loadBurst` at once, then
 * `loadsPerSecond`); a miss that finds a load in flight, or the budget empty, waits for the
 * next load, which every miss waiting shares. So a sporadic new realm's first token costs one
 * list and no wait, a flood of unknown names costs the token service at most the budget in
 * total, each of those tokens waits at most about a second for its 401, and a brand-new realm's
 * first token during such a flood waits as long and then works. A failed load answers
 * `unavailable` (the caller's 503).
 *
 * Bound: the set is the last list, replaced whole on every load (names are checked by the
 * client), minus realms whose keys answered 404 since (`forget`).
 */
import type { Logger } from '../platform/logger.js';
import { FetchBudget } from './fetch-budget.js';

export type RealmVerdict = 'known' | 'unknown' | 'unavailable';

export interface RealmDirectoryOptions {
  /** Every realm's name (the token service's realm list); rejects when it cannot be had. */
  load(): Promise<string[]>;
  logger: Logger;
  /** Loads that may start at once (default 5)... */
  loadBurst?: number;
  /** ...and per second after that (default 1). */
  loadsPerSecond?: number;
}

/** The load that waiting misses share, not started yet. */
interface QueuedLoad {
  promise: Promise<boolean>;
  timer?: NodeJS.Timeout;
  settle(loaded: boolean | Promise<boolean>): void;
}

export class RealmDirectory {
  private names: Set<string> = new Set();
  private readonly budget: FetchBudget;
  /** The load in flight (resolves true when it replaced the list). */
  private loading: Promise<boolean> | undefined;
  private queued: QueuedLoad | undefined;
  private closed = false;

  constructor(private readonly options: RealmDirectoryOptions) {
    this.budget = new FetchBudget(options.loadBurst ?? 5, options.loadsPerSecond ?? 1);
  }

  /** Whether the last list named the realm: no call, no wait. */
  has(tenant: string): boolean {
    return this.names.has(tenant);
  }

  /** Whether the realm exists, by a list requested from now on (see the module comment). */
  async confirm(tenant: string): Promise<RealmVerdict> {
    if (!(await this.loadFromNow())) return 'unavailable';
    return this.names.has(tenant) ? 'known' : 'unknown';
  }

  /** The realm's keys answered 404: it was deleted after the list was made. */
  forget(tenant: string): void {
    this.names.delete(tenant);
  }

  /** Answers every waiting miss `unavailable` and starts no more loads. */
  close(): void {
    this.closed = true;
    if (this.queued !== undefined) {
      clearTimeout(this.queued.timer);
      this.queued.settle(false);
      this.queued = undefined;
    }
  }

  /** A load that starts at or after this call: the queued one, a new one now, or one queued for when it may start. */
  private loadFromNow(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.queued !== undefined) return this.queued.promise;
    // A load in flight was requested before this call: it cannot vouch for a realm created since.
    if (this.loading === undefined && this.budget.take()) return this.start();
    let settle!: QueuedLoad['settle'];
    const promise = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    const queued: QueuedLoad = { promise, settle };
    this.queued = queued;
    this.arm(queued);
    return promise;
  }

  /** Starts the queued load once the load in flight has ended and the budget allows. */
  private arm(queued: QueuedLoad): void {
    queued.timer = setTimeout(
      () => {
        void (this.loading ?? Promise.resolve(true)).then(() => {
          if (this.queued !== queued) return;
          if (!this.budget.take()) {
            this.arm(queued);
            return;
          }
          this.queued = undefined;
          queued.settle(this.start());
        });
      },
      Math.min(this.budget.waitMs(), 60_000),
    );
    queued.timer.unref();
  }

  private start(): Promise<boolean> {
    const loading: Promise<boolean> = this.options
      .load()
      .then(
        (names) => {
          this.names = new Set(names);
          return true;
        },
        (err: unknown) => {
          this.options.logger.warn(
            { err: { message: (err as Error)?.message } },
            'realm list load failed',
          );
          return false;
        },
      )
      .finally(() => {
        if (this.loading === loading) this.loading = undefined;
      });
    this.loading = loading;
    return loading;
  }
}
