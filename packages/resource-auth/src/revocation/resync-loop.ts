/**
 * The resync loop: brings the map up to date with Postgres (through the token service's
 * internal API), one resync at a time, every `resyncMs`, sooner after a failure, and at once when
 * asked. The first resync loads the snapshot; each later one asks the change feed for what was
 * committed after the last position read, so a quiet resync moves a few bytes whatever the
 * number of tenants or the history. The snapshot is loaded again only when the feed cannot
 * continue the position (`reset`: the reader was away longer than the horizon, or the feed was
 * rebuilt). The periodic resync bounds how long a change stays unseen when the token service
 * died between its commit and its publish.
 */
import type { Logger } from '../platform/logger.js';
import type { RevocationChanges, RevocationSnapshot } from '../platform/revocation-types.js';
import type { Sized } from '../platform/token-service-reader.js';
import type { RevocationMap } from './revocation-map.js';
import type { RevocationMetrics } from './revocation-metrics.js';

type Loading = { readonly kind: 'loading'; again: boolean; done: Promise<void> };

/** Where the loop stands; a new object on every change, so a finished resync knows whether it is still the current one. */
type LoopState =
  | { readonly kind: 'waiting' } // the next resync is on the timer (before the first, not yet asked for)
  | Loading // `again`: a caller needs a resync that starts after the one in flight
  | { readonly kind: 'stopped' };

/** The token service's revocation routes; each rejects when it cannot answer (unreachable, error status, malformed). */
export interface ResyncSource {
  snapshot(): Promise<Sized<RevocationSnapshot>>;
  changes(position: string): Promise<Sized<RevocationChanges>>;
}

export interface ResyncLoopOptions<Basis> {
  map: RevocationMap;
  source: ResyncSource;
  resyncMs: number;
  metrics: Pick<
    RevocationMetrics,
    'resyncFailures' | 'resyncRequests' | 'resyncEntries' | 'resyncBytes' | 'expired'
  >;
  logger: Logger;
  /** Taken just before each resync; handed to `onLoaded` when that resync succeeds. */
  basis(): Basis;
  onLoaded(basis: Basis): void;
}

/** Failed resyncs retry after 125 ms × 2^failures (0.25 s, 0.5 s, 1 s, ...), never later than `resyncMs`. */
const BACK_OFF_BASE_MS = 125;
const BACK_OFF_MAX_DOUBLINGS = 8;

export class ResyncLoop<Basis> {
  #state: LoopState = { kind: 'waiting' };
  #timer: NodeJS.Timeout | undefined;
  /** Consecutive failed resyncs: they set the back-off. */
  #failures = 0;
  /** One log line per distinct failure, not one per retry. */
  #lastError = '';
  #lastRequestedAt: number | undefined;
  #loaded = 0;
  #snapshots = 0;
  /** The feed position the map is complete up to; undefined until a snapshot has loaded (and after a reset). */
  #position: string | undefined;

  constructor(private readonly options: ResyncLoopOptions<Basis>) {}

  /** Resyncs (snapshot or changes) completed since start. */
  get loaded(): number {
    return this.#loaded;
  }

  /** Snapshots loaded since start (the first, and one after each gap the feed could not bridge). */
  get snapshots(): number {
    return this.#snapshots;
  }

  /** The feed position read up to. */
  get position(): string | undefined {
    return this.#position;
  }

  /** When the last completed resync was requested (epoch ms); undefined before the first. */
  get lastRequestedAt(): number | undefined {
    return this.#lastRequestedAt;
  }

  /**
   * Resyncs now, or joins the resync in flight. `fresh`: the caller needs one that STARTS after
   * now (a new subscription), so a resync already in flight is followed by another.
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

  /** Stops the timer at once (synchronously); resolves when the resync in flight, if any, has finished. */
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
        this.#failures = (await this.#resync()) ? 0 : this.#failures + 1;
      } while (loading.again && this.#state === loading);
    } finally {
      if (this.#state === loading) this.#scheduleNext();
    }
  }

  #scheduleNext(): void {
    const { resyncMs } = this.options;
    this.#state = { kind: 'waiting' };
    const delay =
      this.#failures === 0
        ? resyncMs
        : Math.min(
            resyncMs,
            BACK_OFF_BASE_MS * 2 ** Math.min(this.#failures, BACK_OFF_MAX_DOUBLINGS),
          );
    this.#timer = setTimeout(() => void this.request(), delay);
    this.#timer.unref();
  }

  /** One resync; true when it succeeded. */
  async #resync(): Promise<boolean> {
    const { map, logger, metrics } = this.options;
    // Decided before the request: what the resync may prove depends on what held when it was asked for.
    const basis = this.options.basis();
    const epoch = map.beginEpoch();
    const requestedAt = Date.now();
    try {
      await this.#read();
    } catch (err) {
      if (this.#state.kind === 'stopped') return false;
      metrics.resyncFailures.inc();
      const { message } = err as Error;
      if (message !== this.#lastError)
        logger.warn({ err: { message } }, 'revocation resync failed; retrying');
      this.#lastError = message;
      return false;
    }
    map.settle(epoch);
    metrics.expired.inc(map.expire(performance.now()));
    this.#lastRequestedAt = requestedAt;
    this.#loaded += 1;
    this.#lastError = '';
    if (this.#loaded === 1)
      logger.info({ entries: map.size, position: this.#position }, 'revocation snapshot loaded');
    this.options.onLoaded(basis);
    return true;
  }

  /** The changes after the position, page by page; the snapshot when there is no position or the feed cannot continue it. */
  async #read(): Promise<void> {
    const { map, source, metrics, logger } = this.options;
    while (this.#position !== undefined) {
      const page = await source.changes(this.#position);
      metrics.resyncRequests.inc({ kind: 'changes' });
      metrics.resyncBytes.inc({ kind: 'changes' }, page.bytes);
      if (page.reset) {
        logger.warn(
          { position: this.#position },
          'revocation feed cannot continue from our position; loading the snapshot',
        );
        this.#position = undefined;
        break;
      }
      map.merge(page.entries, performance.now());
      metrics.resyncEntries.inc({ kind: 'changes' }, page.entries.length);
      this.#position = page.position;
      if (!page.more) return;
    }
    const snapshot = await source.snapshot();
    metrics.resyncRequests.inc({ kind: 'snapshot' });
    metrics.resyncBytes.inc({ kind: 'snapshot' }, snapshot.bytes);
    metrics.resyncEntries.inc({ kind: 'snapshot' }, snapshot.entries.length);
    map.replace(snapshot.entries, performance.now());
    this.#position = snapshot.position;
    this.#snapshots += 1;
  }
}
