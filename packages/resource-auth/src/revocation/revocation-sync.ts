/**
 * The resource-server side of versioned revocation (docs/architecture.md, "Revocation on
 * resource servers"; DESIGN.md, "Tokens and revocation").
 *
 * Sources of truth, in order of trust: Postgres, reached through the token service's
 * internal API (the snapshot and the per-principal lookup); then the Redis channel, which
 * only makes changes arrive sooner. Redis holds no state of ours, so a flushed or
 * restarted Redis cannot bring a revoked token back: the map only ever grows from facts
 * read from Postgres or published after a commit.
 *
 * Modes of `check`:
 * - live: subscribed on the current Redis connection AND a snapshot requested after that
 *   subscription was confirmed has loaded. Every commit is then either in the snapshot
 *   (committed before it was read) or published after we subscribed (delivered to us), so
 *   the map is complete: answer synchronously from memory.
 * - fallback (before the first live moment, after any disconnect, and from a reconnect
 *   until the snapshot after it has loaded, since events published while we were away are
 *   lost): a token the map already proves revoked is refused at once; otherwise ask the
 *   token service for the principal (answers cached ≤ 1 s). If that fails: 'unavailable'
 *   (the caller answers 503). Never 'valid' without an answer from the truth.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { Registry } from 'prom-client';
import type { Logger } from '@plant/shared';
import { PrincipalLookupCache } from './principal-lookup-cache.js';
import { parseRevocationMessage, REVOCATION_CHANNEL } from './revocation-entry.js';
import { RevocationMap } from './revocation-map.js';
import { createRevocationMetrics, type RevocationMetrics } from './revocation-metrics.js';
import { TokenServiceClient, type PrincipalLookup } from './token-service-client.js';
import type { RevocationChecker, RevocationVerdict } from './types.js';

export interface RevocationSyncOptions {
  /** Redis carrying the channel `plantstore:revocations` (`REDIS_URL`). */
  redisUrl: string;
  /** Base URL of the token service's internal API (`TOKEN_SERVICE_INTERNAL_URL`). */
  tokenServiceUrl: string;
  /** `INTERNAL_API_TOKEN`. Never logged. */
  internalToken: string;
  /**
   * Period of the full re-sync from the snapshot (`REVOCATION_RESYNC_MS`, default 5000). It
   * bounds how long a change stays unseen when the publisher died between commit and publish.
   */
  resyncMs?: number;
  logger: Logger;
  /** Where the `revocation_*` metrics go (one revocation sync per registry). Default: a private registry. */
  metricsRegistry?: Registry;
  /** How long a fallback lookup's answer is reused, ms (default and maximum 1000). */
  fallbackCacheMs?: number;
  /** Timeout of one fallback principal lookup, ms (default 1000). */
  lookupTimeoutMs?: number;
  /** Timeout of one snapshot load, ms (default 5000). */
  snapshotTimeoutMs?: number;
  /**
   * Period of the PING on the subscriber connection, ms (default 2000). A connection that
   * died without a FIN (network partition) is only noticed by a command that never answers;
   * the ping bounds how long such a dead subscription is taken for live.
   */
  heartbeatMs?: number;
  /** How long `start()` waits for Redis before loading the first snapshot without it, ms (default 2000). */
  startWaitMs?: number;
}

/** A snapshot of the sync's state, for diagnostics and tests. */
export interface RevocationSyncState {
  /** The first snapshot has loaded (`isReady`). */
  ready: boolean;
  /** Subscribed on the current Redis connection. */
  subscribed: boolean;
  /** Checks are answered from memory; false means fallback lookups. */
  live: boolean;
  /** Principals with revoked tokens held in memory. */
  entries: number;
  /** Milliseconds since the last loaded snapshot was requested; undefined before the first. */
  snapshotAgeMs: number | undefined;
  /** Snapshots loaded since start. */
  snapshotsLoaded: number;
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

const MAX_FALLBACK_CACHE_MS = 1000;

/**
 * Builds the revocation map of a resource server: `check` for bearer verification,
 * `isReady` for `/readyz`, `start`/`stop` for the process life cycle.
 *
 * @example
 * const revocation = createRevocationSync({ redisUrl: config.REDIS_URL,
 *   tokenServiceUrl: config.TOKEN_SERVICE_INTERNAL_URL, internalToken: config.INTERNAL_API_TOKEN,
 *   resyncMs: config.REVOCATION_RESYNC_MS, logger, metricsRegistry });
 * await revocation.start();
 * const auth = createBearerAuth({ ..., revocation });
 */
export function createRevocationSync(options: RevocationSyncOptions): RevocationSync {
  const logger = options.logger.child({ component: 'revocation' });
  const resyncMs = positive(options.resyncMs, 5000);
  const fallbackCacheMs = Math.min(positive(options.fallbackCacheMs, MAX_FALLBACK_CACHE_MS), MAX_FALLBACK_CACHE_MS);
  const lookupTimeoutMs = positive(options.lookupTimeoutMs, 1000);
  const snapshotTimeoutMs = positive(options.snapshotTimeoutMs, 5000);
  const heartbeatMs = positive(options.heartbeatMs, 2000);
  const startWaitMs = positive(options.startWaitMs, 2000);

  const abort = new AbortController();
  const client = new TokenServiceClient({ baseUrl: options.tokenServiceUrl, internalToken: options.internalToken, signal: abort.signal });
  const map = new RevocationMap();
  const lookups = new PrincipalLookupCache(fallbackCacheMs);

  let subscriber: Redis | undefined;
  /** Incremented whenever the subscriber connection is lost: a subscription or sync begun on an older connection cannot make us live. */
  let connection = 0;
  let subscribed = false;
  let live = false;
  let ready = false;
  let started = false;
  let stopped = false;
  let lastSnapshotAt: number | undefined;
  let snapshotsLoaded = 0;
  let syncFailures = 0;
  let syncInFlight: Promise<void> | undefined;
  let syncAgain = false;
  let resyncTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  let heartbeatPending = false;
  let lastRedisError = '';
  let lastSnapshotError = '';
  const subscribedWaiters: Array<() => void> = [];

  const metrics: RevocationMetrics = createRevocationMetrics(options.metricsRegistry ?? new Registry(), {
    snapshotAgeSeconds: () => (lastSnapshotAt === undefined ? Infinity : (Date.now() - lastSnapshotAt) / 1000),
    subscriptionUp: () => subscribed,
    live: () => live,
    entries: () => map.size,
  });

  // ---- Redis subscription ------------------------------------------------------------

  function connectionLost(reason: string): void {
    connection += 1;
    if (subscribed || live) logger.warn({ reason }, 'revocation subscription lost; checks fall back to token service lookups');
    subscribed = false;
    live = false;
  }

  function onReady(): void {
    const current = connection;
    lastRedisError = '';
    subscriber!.subscribe(REVOCATION_CHANNEL).then(
      () => {
        if (current !== connection || stopped) return;
        subscribed = true;
        logger.info({ channel: REVOCATION_CHANNEL }, 'revocation subscription active; re-syncing');
        for (const wake of subscribedWaiters.splice(0)) wake();
        // Events published while we were away are lost: only a snapshot requested from now on makes the map complete.
        void requestSync(true);
      },
      (err: unknown) => {
        if (current !== connection || stopped) return;
        logger.warn({ err: { message: (err as Error).message } }, 'revocation subscribe failed; reconnecting');
        subscriber?.disconnect(true);
      },
    );
  }

  function onMessage(channel: string, message: string): void {
    if (channel !== REVOCATION_CHANNEL) return;
    const entry = parseRevocationMessage(message);
    if (entry === undefined) {
      metrics.eventsReceived.inc({ result: 'malformed' });
      logger.warn({ length: message.length }, 'malformed revocation event ignored');
      return;
    }
    const changed = map.apply(entry);
    metrics.eventsReceived.inc({ result: changed ? 'applied' : 'unchanged' });
    if (changed) logger.debug({ tenant: entry.tenant, sub: entry.sub, version: entry.version, deleted: entry.deleted }, 'revocation event applied');
  }

  function onError(err: Error): void {
    // ioredis repeats the same error on every retry; one line per distinct failure is enough.
    if (err.message === lastRedisError) return;
    lastRedisError = err.message;
    logger.warn({ err: { message: err.message } }, 'revocation subscriber connection error');
    for (const wake of subscribedWaiters.splice(0)) wake();
  }

  function connect(): Redis {
    const redisOptions: RedisOptions = {
      lazyConnect: true,
      connectionName: 'plantstore-revocation-subscriber',
      // We subscribe ourselves on every 'ready' and track the moment it is confirmed; ioredis'
      // automatic resubscription would give no such moment.
      autoResubscribe: false,
      autoResendUnfulfilledCommands: false,
      // Commands fail at once while disconnected rather than queueing (the PING must not wait).
      enableOfflineQueue: false,
      maxRetriesPerRequest: null,
      connectTimeout: 2000,
      keepAlive: 5000,
      retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 5), 1000),
    };
    const redis = new Redis(options.redisUrl, redisOptions);
    redis.on('ready', onReady);
    redis.on('message', onMessage);
    redis.on('error', onError);
    redis.on('close', () => connectionLost('close'));
    redis.on('reconnecting', () => connectionLost('reconnecting'));
    redis.on('end', () => connectionLost('end'));
    redis.connect().catch(() => {
      // Reported through 'error'; ioredis keeps reconnecting by retryStrategy.
    });
    return redis;
  }

  function heartbeat(): void {
    const redis = subscriber;
    if (redis === undefined || !subscribed || heartbeatPending) return;
    const current = connection;
    heartbeatPending = true;
    let timer: NodeJS.Timeout | undefined;
    Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('PING timed out')), Math.max(1000, heartbeatMs));
      }),
    ])
      .catch((err: unknown) => {
        if (current !== connection || stopped) return;
        logger.warn({ err: { message: (err as Error).message } }, 'revocation subscriber unresponsive; reconnecting');
        connectionLost('heartbeat');
        redis.disconnect(true);
      })
      .finally(() => {
        clearTimeout(timer);
        heartbeatPending = false;
      });
  }

  // ---- Snapshot ----------------------------------------------------------------------

  async function loadSnapshot(): Promise<boolean> {
    // Decided before the request: only a snapshot read after the subscription was confirmed completes the map.
    const subscribedConnection = subscribed ? connection : -1;
    const epoch = map.beginEpoch();
    const requestedAt = Date.now();
    let entries;
    try {
      entries = await client.snapshot(snapshotTimeoutMs);
    } catch (err) {
      if (stopped) return false;
      metrics.snapshotFailures.inc();
      const message = (err as Error).message;
      if (message !== lastSnapshotError) logger.warn({ err: { message } }, 'revocation snapshot failed; retrying');
      lastSnapshotError = message;
      return false;
    }
    for (const entry of entries) map.apply(entry);
    map.sweep(epoch);
    lastSnapshotAt = requestedAt;
    snapshotsLoaded += 1;
    lastSnapshotError = '';
    if (!ready) {
      ready = true;
      logger.info({ entries: map.size }, 'revocation snapshot loaded');
    }
    if (!live && subscribedConnection === connection && subscribed && !stopped) {
      live = true;
      lookups.clear();
      logger.info({ entries: map.size }, 'revocation map live');
    }
    return true;
  }

  /**
   * Runs one snapshot load at a time. `fresh`: the caller needs a load that STARTS after
   * now (a new subscription), so a load already in flight is followed by another.
   */
  function requestSync(fresh: boolean): Promise<void> {
    if (stopped) return Promise.resolve();
    if (syncInFlight !== undefined) {
      if (fresh) syncAgain = true;
      return syncInFlight;
    }
    clearTimeout(resyncTimer);
    syncInFlight = (async () => {
      do {
        syncAgain = false;
        syncFailures = (await loadSnapshot()) ? 0 : syncFailures + 1;
      } while (syncAgain && !stopped);
    })().finally(() => {
      syncInFlight = undefined;
      if (stopped) return;
      // Failures retry sooner (0.25 s, 0.5 s, 1 s, ...) but never later than the re-sync period.
      const delay = syncFailures === 0 ? resyncMs : Math.min(resyncMs, 125 * 2 ** Math.min(syncFailures, 8));
      resyncTimer = setTimeout(() => void requestSync(false), delay);
      resyncTimer.unref();
    });
    return syncInFlight;
  }

  // ---- Checks ------------------------------------------------------------------------

  function lookupVerdict(lookup: PrincipalLookup, tenant: string, sub: string, ver: number): RevocationVerdict {
    // The token verified against the realm's key, so the principal existed when it was minted;
    // the token service keeps principal rows after deletion. "Never existed" therefore means the
    // realm or the principal was purged: no token of it may work. The authority answered, so
    // this is a revocation (401), not an outage (503).
    if (lookup.kind === 'not-found') return 'revoked';
    const { version, deleted } = lookup.entry;
    if (deleted || ver < version) return 'revoked';
    // An event may have arrived since the lookup was sent.
    return map.verdict(tenant, sub, ver);
  }

  function fallbackCheck(tenant: string, sub: string, ver: number): RevocationVerdict | Promise<RevocationVerdict> {
    if (stopped) return 'unavailable';
    if (map.isRevoked(tenant, sub, ver)) {
      metrics.fallbacks.inc({ result: 'revoked' });
      return 'revoked';
    }
    const key = PrincipalLookupCache.key(tenant, sub);
    const cached = lookups.get(key, Date.now());
    if (cached !== undefined) {
      const verdict = lookupVerdict(cached, tenant, sub, ver);
      metrics.fallbacks.inc({ result: verdict });
      return verdict;
    }
    return lookups
      .lookup(key, async () => {
        try {
          const lookup = await client.principal(tenant, sub, lookupTimeoutMs);
          if (lookup.kind === 'found') map.apply(lookup.entry);
          metrics.fallbackLookups.inc({ result: lookup.kind === 'found' ? 'found' : 'not_found' });
          return lookup;
        } catch (err) {
          metrics.fallbackLookups.inc({ result: 'failed' });
          logger.warn({ err: { message: (err as Error).message } }, 'revocation fallback lookup failed');
          throw err;
        }
      })
      .then(
        (lookup) => lookupVerdict(lookup, tenant, sub, ver),
        () => 'unavailable' as const,
      )
      .then((verdict) => {
        metrics.fallbacks.inc({ result: verdict });
        return verdict;
      });
  }

  return {
    check(tenant: string, sub: string, ver: number): RevocationVerdict | Promise<RevocationVerdict> {
      if (live) return map.verdict(tenant, sub, ver);
      return fallbackCheck(tenant, sub, ver);
    },

    isReady(): boolean {
      return ready;
    },

    async start(): Promise<void> {
      if (started) return;
      started = true;
      subscriber = connect();
      heartbeatTimer = setInterval(heartbeat, heartbeatMs);
      heartbeatTimer.unref();
      let waitTimer: NodeJS.Timeout | undefined;
      // Subscribed (the subscription's own sync is then under way) or Redis failing, or too slow.
      await new Promise<void>((resolve) => {
        subscribedWaiters.push(resolve);
        waitTimer = setTimeout(resolve, startWaitMs);
      });
      clearTimeout(waitTimer);
      await requestSync(false);
    },

    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      live = false;
      subscribed = false;
      clearTimeout(resyncTimer);
      clearInterval(heartbeatTimer);
      abort.abort();
      for (const wake of subscribedWaiters.splice(0)) wake();
      subscriber?.disconnect();
      await syncInFlight?.catch(() => undefined);
    },

    state(): RevocationSyncState {
      return {
        ready,
        subscribed,
        live,
        entries: map.size,
        snapshotAgeMs: lastSnapshotAt === undefined ? undefined : Date.now() - lastSnapshotAt,
        snapshotsLoaded,
      };
    },
  };
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}
