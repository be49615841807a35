import type { PrincipalLookup } from '../platform/token-service-reader.js';

interface Cached {
  /** When the lookup was SENT: its answer can only be older than that, never newer. */
  at: number;
  lookup: PrincipalLookup;
}

/**
 * Answers of the fallback principal lookup, kept for at most `ttlMs` (the design caps this at
 * 1 s: it is how long a revocation may go unseen while Redis is down), plus the lookups in
 * flight so a burst of requests of one principal costs one call. Bounded: the oldest answer
 * goes first when `maxEntries` is reached.
 */
export class PrincipalLookupCache {
  readonly #answers = new Map<string, Cached>();
  readonly #inFlight = new Map<string, Promise<PrincipalLookup>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  static key(tenant: string, sub: string): string {
    return `${tenant}\u0000${sub}`;
  }

  /** A fresh answer, or undefined. */
  get(key: string, now: number): PrincipalLookup | undefined {
    const cached = this.#answers.get(key);
    if (cached === undefined) return undefined;
    if (now - cached.at < this.ttlMs) return cached.lookup;
    this.#answers.delete(key);
    return undefined;
  }

  /** The shared lookup of `key`, started with `load` unless one is already in flight. */
  lookup(key: string, load: () => Promise<PrincipalLookup>): Promise<PrincipalLookup> {
    const pending = this.#inFlight.get(key);
    if (pending !== undefined) return pending;
    const sentAt = Date.now();
    const promise = load().then(
      (lookup) => {
        this.#inFlight.delete(key);
        this.#remember(key, { at: sentAt, lookup });
        return lookup;
      },
      (err: unknown) => {
        // Failures are not remembered: the next request tries again (and answers 503 if it fails too).
        this.#inFlight.delete(key);
        throw err;
      },
    );
    this.#inFlight.set(key, promise);
    return promise;
  }

  clear(): void {
    this.#answers.clear();
  }

  #remember(key: string, cached: Cached): void {
    this.#answers.delete(key);
    if (this.#answers.size >= this.maxEntries) {
      const oldest = this.#answers.keys().next();
      if (!oldest.done) this.#answers.delete(oldest.value);
    }
    this.#answers.set(key, cached);
  }
}
