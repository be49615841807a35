/**
 * The snapshot loop: loads the full revocation list (Postgres, through the token service's
 * internal API) into the map, one load at a time, every `resyncMs`, sooner after a failure,
 * and at once when asked. The periodic load bounds how long a change stays unseen when the
 * token service died between its commit and its publish.
 */
import type { Logger, RevocationEntry } from '@plant/shared';
import type { RevocationMap } from './revocation-map.js';
import type { RevocationMetrics } from './revocation-metrics.js';

type Loading = { readonly kind: 'loading'; again: boolean; done: Promise<void> };

/** Where the loop stands; a new object on every change, so a finished load knows whether it is still the current one. */
type LoopState =
  | { readonly kind: 'waiting' } // the next load is on the timer (before the first, not yet asked for)
  | Loading // `again`: a caller needs a load that starts after the one in flight
  | { readonly kind: 'stopped' };

export interface SnapshotLoopOptions<Basis> {
  map: RevocationMap;
  /** Reads the snapshot; rejects when it cannot (unreachable, error status, malformed). */
  readSnapshot(): Promise<RevocationEntry[]>;
  resyncMs: number;
  metrics: Pick<RevocationMetrics, 'snapshotFailures'>;
  logger: Logger;
  /** Taken just before each request; handed to `onLoaded` when that load succeeds. */
  basis(): Basis;
  onLoaded(basis: Basis): void;
}

/** Failed loads retry after 125 ms × 2^failures (0.25 s, 0.5 s, 1 s, ...), never later than `resyncMs`. */
const BACK_OFF_BASE_MS = 125;
const BACK_OFF_MAX_DOUBLINGS = 8;

export class SnapshotLoop<Basis> {
  #state: LoopState = { kind: 'waiting' };
  #timer: NodeJS.Timeout | undefined;
  /** Consecutive failed loads: they set the back-off. */
  #failures = 0;
  /** One log line per distinct failure, not one per retry. */
  #lastError = '';
  #lastRequestedAt: number | undefined;
  #loaded = 0;

  constructor(private readonly options: SnapshotLoopOptions<Basis>) {}

  /** Snapshots loaded since start. */
  get loaded(): number {
    return this.#loaded;
  }

  /** When the last loaded snapshot was requested (epoch ms); undefined before the first. */
  get lastRequestedAt(): number | undefined {
    return this.#lastRequestedAt;
  }

  /**
   * Loads now, or joins the load in flight. `fresh`: the caller needs a load that STARTS after
   * now (a new subscription), so a load already in flight is followed by another.
   */
  request(fresh = false): Promise<void> {
    const state = this.#state;
    if (state.kind === 'stopped') return Promise.resolve();
    if (state.kind === 'loading') {
      if (fresh) state.again = true;
      return state.done;
    }
    clearTimeout(this.#timer);
    const loading: Loading = { kind: 'loading', again: false, done: Promise.resolve() };
    this.#state = loading;
    loading.done = this.#run(loading);
    return loading.done;
  }

  /** Stops the timer at once (synchronously); resolves when the load in flight, if any, has finished. */
  async stop(): Promise<void> {
    const state = this.#state;
    this.#state = { kind: 'stopped' };
    clearTimeout(this.#timer);
    if (state.kind === 'loading') await state.done.catch(() => undefined);
  }

  async #run(loading: Loading): Promise<void> {
    try {
      do {
        loading.again = false;
        this.#failures = (await this.#load()) ? 0 : this.#failures + 1;
      } while (loading.again && this.#state === loading);
    } finally {
      if (this.#state === loading) this.#scheduleNext();
    }
  }

  #scheduleNext(): void {
    const { resyncMs } = this.options;
    this.#state = { kind: 'waiting' };
    const delay = this.#failures === 0 ? resyncMs : Math.min(resyncMs, BACK_OFF_BASE_MS * 2 ** Math.min(this.#failures, BACK_OFF_MAX_DOUBLINGS));
    this.#timer = setTimeout(() => void this.request(), delay);
    this.#timer.unref();
  }

  /** One load; true when it succeeded. */
  async #load(): Promise<boolean> {
    const { map, logger } = this.options;
    // Decided before the request: what the snapshot may prove depends on what held when it was asked for.
    const basis = this.options.basis();
    const epoch = map.beginEpoch();
    const requestedAt = Date.now();
    let entries: RevocationEntry[];
    try {
      entries = await this.options.readSnapshot();
    } catch (err) {
      if (this.#state.kind === 'stopped') return false;
      this.options.metrics.snapshotFailures.inc();
      const { message } = err as Error;
      if (message !== this.#lastError) logger.warn({ err: { message } }, 'revocation snapshot failed; retrying');
      this.#lastError = message;
      return false;
    }
    for (const entry of entries) map.confirm(entry, epoch);
    map.sweep(epoch);
    this.#lastRequestedAt = requestedAt;
    this.#loaded += 1;
    this.#lastError = '';
    if (this.#loaded === 1) logger.info({ entries: map.size }, 'revocation snapshot loaded');
    this.options.onLoaded(basis);
    return true;
  }
}
