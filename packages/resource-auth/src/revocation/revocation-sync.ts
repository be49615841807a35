/**
 * The resource-server side of versioned revocation (docs/architecture.md, "Revocation on
 * resource servers"; docs/architecture.md, "Revocation on resource servers"): wires the subscription
 * (revocation-subscription.ts), the resync loop (resync-loop.ts) and the fallback check
 * (fallback-check.ts) around one map, and decides when the map is live.
 *
 * Sources of truth, in order of trust: Postgres, reached through the token service's
 * internal API (the snapshot, the change feed and the per-principal lookup); then the Redis channel, which
 * only makes changes arrive sooner. Redis holds no state of ours, so a flushed or
 * restarted Redis cannot bring a revoked token back: the map only ever grows from facts
 * read from Postgres or published after a commit.
 *
 * Modes of `check`:
 * - live: subscribed on the current Redis connection AND a resync (snapshot or changes) requested
 *   after that subscription was confirmed has completed. Every commit is then either in the map
 *   (committed before it was read) or published after we subscribed (delivered to us), so
 *   the map is complete: answer synchronously from memory.
 * - fallback (before the first live moment, after any disconnect, and from a reconnect
 *   until the resync after it has completed, since events published while we were away are
 *   lost): see fallback-check.ts. Never 'valid' without an answer from the truth.
 * - stopped: 'unavailable'.
 */
import { Registry } from 'prom-client';
import type { Logger } from '../platform/logger.js';
import { redisTargetOf } from '../platform/redis-client.js';
import { parseRevocationEnvelope, type RevocationEnvelope } from '../platform/revocation-entry.js';
import { REVOCATION_CHANNEL } from '../platform/revocation-types.js';
import { TokenServiceReader } from '../platform/token-service-reader.js';
import { FallbackCheck } from './fallback-check.js';
import { RevocationMap } from './revocation-map.js';
import { createRevocationMetrics, type RevocationMetrics } from './revocation-metrics.js';
import { RevocationSubscription, type SubscriptionState } from './revocation-subscription.js';
import {
  revocationSyncTimings,
  type ConsumerSpan,
  type RevocationSyncConfig,
  type RevocationSyncOptions,
} from './revocation-sync-options.js';
import { ResyncLoop } from './resync-loop.js';
import type { RevocationChecker, RevocationVerdict } from './types.js';

/** A snapshot of the sync's state, for diagnostics and tests. */
export interface RevocationSyncState {
  /** The first resync (a snapshot) has completed (`isReady`). */
  ready: boolean;
  /** Subscribed on the current Redis connection. */
  subscribed: boolean;
  /** Checks are answered from memory; false means fallback lookups. */
  live: boolean;
  /** Principals with revoked tokens held in memory. */
  entries: number;
  /** Milliseconds since the last completed resync was requested; undefined before the first. */
  resyncAgeMs: number | undefined;
  /** Resyncs completed since start (the first a snapshot, then the change feed). */
  resyncs: number;
  /** Snapshots loaded since start: the first, and one after each gap the change feed could not bridge. */
  snapshotsLoaded: number;
  /** The change-feed position the map is complete up to. */
  position: string | undefined;
}

/** The revocation map of one resource-server process, with its life cycle. */
export interface RevocationSync extends RevocationChecker {
  /**
   * Connects the subscriber and loads the first snapshot. Resolves once the map is live,
   * or the first snapshot attempt has finished without Redis (after `startWaitMs`), whichever
   * comes first; it never rejects for an unreachable dependency (it keeps retrying, and
   * `isReady()` stays false until a snapshot loads). Checks made before are answered by the
   * fallback lookup.
   */
  start(): Promise<void>;
  /** Closes the subscriber, stops the timers and aborts calls in flight. Later checks answer 'unavailable'. */
  stop(): Promise<void>;
  state(): RevocationSyncState;
}

/** How `check` answers: 'unstarted' and 'fallback' ask the fallback check, 'live' the map alone. */
type Mode = 'unstarted' | 'fallback' | 'live' | 'stopped';

class ResourceServerRevocation implements RevocationSync {
  #mode: Mode = 'unstarted';
  readonly #map = new RevocationMap();
  /** Aborts the internal API calls in flight on stop. */
  readonly #abort = new AbortController();
  readonly #logger: Logger;
  readonly #metrics: RevocationMetrics;
  readonly #startWaitMs: number;
  readonly #subscription: RevocationSubscription;
  readonly #resyncs: ResyncLoop<SubscriptionState | undefined>;
  readonly #fallback: FallbackCheck;
  readonly #consumerSpan: ConsumerSpan;

  constructor(options: RevocationSyncOptions) {
    const timings = revocationSyncTimings(options);
    const logger = options.logger.child({ component: 'revocation' });
    const map = this.#map;
    const client = new TokenServiceReader({
      baseUrl: options.tokenServiceUrl,
      internalToken: options.internalToken,
      signal: this.#abort.signal,
      ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
    });
    this.#consumerSpan = options.consumerSpan ?? withoutSpan;
    const metrics = createRevocationMetrics(options.metricsRegistry ?? new Registry(), {
      resyncAgeSeconds: () => {
        const at = this.#resyncs.lastRequestedAt;
        return at === undefined ? Infinity : (Date.now() - at) / 1000;
      },
      subscriptionUp: () => this.#subscription.subscribed,
      live: () => this.#mode === 'live',
      entries: () => map.size,
    });
    this.#logger = logger;
    this.#metrics = metrics;
    this.#startWaitMs = timings.startWaitMs;
    this.#subscription = new RevocationSubscription({
      redis: options.redis,
      heartbeatMs: timings.heartbeatMs,
      logger,
      // Events published while we were away are lost: only a resync requested from now on makes the map complete.
      onSubscribed: () => void this.#resyncs.request(true),
      onLost: () => this.#fallBack(),
      onMessage: (message) => this.#applyEvent(message),
    });
    this.#resyncs = new ResyncLoop({
      map,
      source: {
        snapshot: () => client.snapshot(timings.snapshotTimeoutMs),
        changes: (position) => client.changes(position, timings.snapshotTimeoutMs),
      },
      resyncMs: timings.resyncMs,
      metrics,
      logger,
      basis: () => this.#subscription.current(),
      onLoaded: (subscribedAtRequest) => this.#maybeGoLive(subscribedAtRequest),
    });
    this.#fallback = new FallbackCheck({
      map,
      lookup: (tenant, sub) => client.principal(tenant, sub, timings.lookupTimeoutMs),
      cacheMs: timings.fallbackCacheMs,
      metrics,
      logger,
    });
  }

  check(
    tenant: string,
    sub: string,
    ver: number,
    credential?: string,
  ): RevocationVerdict | Promise<RevocationVerdict> {
    if (this.#mode === 'live') return this.#map.verdict(tenant, sub, ver, credential);
    if (this.#mode === 'stopped') return 'unavailable';
    return this.#fallback.check(tenant, sub, ver, credential);
  }

  isReady(): boolean {
    return this.#resyncs.loaded > 0;
  }

  async start(): Promise<void> {
    if (this.#mode !== 'unstarted') return;
    this.#mode = 'fallback';
    this.#subscription.start();
    // Subscribed (the subscription's own load is then under way), Redis failing, or too slow.
    await this.#subscription.settled(this.#startWaitMs);
    await this.#resyncs.request();
  }

  async stop(): Promise<void> {
    if (this.#mode === 'stopped') return;
    this.#mode = 'stopped';
    const loadFinished = this.#resyncs.stop();
    this.#abort.abort();
    this.#subscription.stop();
    await loadFinished;
  }

  state(): RevocationSyncState {
    const at = this.#resyncs.lastRequestedAt;
    return {
      ready: this.isReady(),
      subscribed: this.#subscription.subscribed,
      live: this.#mode === 'live',
      entries: this.#map.size,
      resyncAgeMs: at === undefined ? undefined : Date.now() - at,
      resyncs: this.#resyncs.loaded,
      snapshotsLoaded: this.#resyncs.snapshots,
      position: this.#resyncs.position,
    };
  }

  /** Live once a resync requested under the current, still confirmed subscription has completed. */
  #maybeGoLive(subscribedAtRequest: SubscriptionState | undefined): void {
    if (
      this.#mode !== 'fallback' ||
      subscribedAtRequest === undefined ||
      subscribedAtRequest !== this.#subscription.current()
    )
      return;
    this.#mode = 'live';
    this.#fallback.clear();
    this.#logger.info({ entries: this.#map.size }, 'revocation map live');
  }

  #fallBack(): void {
    if (this.#mode === 'live') this.#mode = 'fallback';
  }

  /**
   * One event from the channel, inside a `revocation apply` span of the publishing change's
   * trace when the message carries one (tracing on at both ends): the reset's trace shows its
   * arrival and application at every replica.
   */
  #applyEvent(message: string): void {
    const envelope = parseRevocationEnvelope(message);
    if (envelope === undefined) {
      this.#metrics.eventsReceived.inc({ result: 'malformed' });
      this.#logger.warn({ length: message.length }, 'malformed revocation event ignored');
      return;
    }
    this.#consumerSpan('revocation apply', envelope, CONSUMER_ATTRIBUTES, (span) => {
      const changed = this.#applyEntry(envelope);
      span?.setAttribute('plantstore.revocation.changed', changed);
    });
  }

  #applyEntry({ entry, publishedMs }: RevocationEnvelope): boolean {
    const changed = this.#map.apply(entry);
    this.#metrics.eventsReceived.inc({ result: changed ? 'applied' : 'unchanged' });
    // Two hosts' clocks: a delay below zero is their skew, counted as none.
    if (publishedMs !== undefined)
      this.#metrics.eventDelay.observe(Math.max(0, Date.now() - publishedMs) / 1000);
    if (changed)
      this.#logger.debug(
        {
          tenant: entry.tenant,
          sub: entry.sub,
          version: entry.version,
          deleted: entry.deleted,
          credentials: entry.credentials,
        },
        'revocation event applied',
      );
    return changed;
  }
}

const CONSUMER_ATTRIBUTES = {
  'messaging.system': 'redis',
  'messaging.destination.name': REVOCATION_CHANNEL,
  'messaging.operation.type': 'process',
};

/** No tracing: the event is applied, and nothing else. */
const withoutSpan: ConsumerSpan = (_name, _carried, _attributes, apply) => apply(undefined);

/**
 * Builds the revocation map of a resource server: `check` for bearer verification,
 * `isReady` for `/readyz`, `start`/`stop` for the process life cycle.
 *
 * @example
 * const revocation = createRevocationSync({ redis: config.REDIS_URL,
 *   tokenServiceUrl: config.TOKEN_SERVICE_INTERNAL_URL, internalToken: config.INTERNAL_API_TOKEN,
 *   resyncMs: config.REVOCATION_RESYNC_MS, logger, metricsRegistry });
 * await revocation.start();
 * const auth = createBearerAuth({ ..., revocation });
 */
export function createRevocationSync(options: RevocationSyncOptions): RevocationSync {
  return new ResourceServerRevocation(options);
}

/** The revocation sync of a resource server from its configuration, its metrics on `metrics`. */
export function revocationSyncFromConfig(
  config: RevocationSyncConfig,
  {
    logger,
    metrics,
    ...hooks
  }: { logger: Logger; metrics: Registry } & Pick<
    RevocationSyncOptions,
    'consumerSpan' | 'requestId'
  >,
): RevocationSync {
  return createRevocationSync({
    redis: redisTargetOf(config),
    tokenServiceUrl: config.TOKEN_SERVICE_INTERNAL_URL,
    internalToken: config.INTERNAL_API_TOKEN,
    resyncMs: config.REVOCATION_RESYNC_MS,
    logger,
    metricsRegistry: metrics,
    ...hooks,
  });
}
