import type { Registry } from 'prom-client';
import type { Logger } from '../platform/logger.js';
import type { RedisConfig, RedisTarget } from '../platform/redis-client.js';

export interface RevocationSyncOptions {
  /** Redis carrying the channel `plantstore:revocations`: `REDIS_URL`, or a Sentinel-managed master (`redisTargetOf(config)`). */
  redis: RedisTarget | string;
  /** Base URL of the token service's internal API (`TOKEN_SERVICE_INTERNAL_URL`). */
  tokenServiceUrl: string;
  /** `INTERNAL_API_TOKEN`. Never logged. */
  internalToken: string;
  /**
   * Period of the resync from the change feed (`REVOCATION_RESYNC_MS`, default 5000). It bounds
   * how long a change stays unseen when the publisher died between commit and publish.
   */
  resyncMs?: number;
  logger: Logger;
  /** Where the `revocation_*` metrics go (one revocation sync per registry). Default: a private registry. */
  metricsRegistry?: Registry;
  /** How long a fallback lookup's answer is reused, ms (default and maximum 1000). */
  fallbackCacheMs?: number;
  /** Timeout of one fallback principal lookup, ms (default 1000). */
  lookupTimeoutMs?: number;
  /** Timeout of one snapshot or change-feed request, ms (default 5000). */
  snapshotTimeoutMs?: number;
  /**
   * Period of the PING on the subscriber connection, ms (default 2000). A connection that
   * died without a FIN (network partition) is only noticed by a command that never answers;
   * the ping bounds how long such a dead subscription is taken for live.
   */
  heartbeatMs?: number;
  /** How long `start()` waits for Redis before loading the first snapshot without it, ms (default 2000). */
  startWaitMs?: number;
  /**
   * Applies each channel event inside a CONSUMER span of the trace its message carries (the
   * services pass `inConsumerSpan` of @plant/shared/tracing). Absent: no span, and nothing of
   * OpenTelemetry is loaded by this package.
   */
  consumerSpan?: ConsumerSpan;
  /** The id of the request being served, sent with the fallback's principal lookups (`currentRequestId` of @plant/shared/logging). */
  requestId?: () => string | undefined;
}

/** What a span is asked here: one attribute. An OpenTelemetry `Span` is one. */
export interface SpanLike {
  setAttribute(key: string, value: string | number | boolean): unknown;
}

/** W3C trace context as a channel message carries it. */
export interface CarriedTraceContext {
  traceparent?: string;
  tracestate?: string;
}

/** `apply` inside a span `name` whose parent is the `carried` context; `apply(undefined)` when there is no span to make. */
export type ConsumerSpan = <T>(
  name: string,
  carried: CarriedTraceContext,
  attributes: Record<string, string | number | boolean>,
  apply: (span: SpanLike | undefined) => T,
) => T;

/** The keys of a resource server's configuration (its `config.ts`) that the revocation sync reads. */
export interface RevocationSyncConfig extends RedisConfig {
  TOKEN_SERVICE_INTERNAL_URL: string;
  INTERNAL_API_TOKEN: string;
  REVOCATION_RESYNC_MS: number;
}

/** The timings of `RevocationSyncOptions`, defaults applied. */
export interface RevocationSyncTimings {
  resyncMs: number;
  fallbackCacheMs: number;
  lookupTimeoutMs: number;
  snapshotTimeoutMs: number;
  heartbeatMs: number;
  startWaitMs: number;
}

/** The design's bound on how long a revocation may go unseen while Redis is down. */
const MAX_FALLBACK_CACHE_MS = 1000;

export function revocationSyncTimings(options: RevocationSyncOptions): RevocationSyncTimings {
  return {
    resyncMs: positive(options.resyncMs, 5000),
    fallbackCacheMs: Math.min(
      positive(options.fallbackCacheMs, MAX_FALLBACK_CACHE_MS),
      MAX_FALLBACK_CACHE_MS,
    ),
    lookupTimeoutMs: positive(options.lookupTimeoutMs, 1000),
    snapshotTimeoutMs: positive(options.snapshotTimeoutMs, 5000),
    heartbeatMs: positive(options.heartbeatMs, 2000),
    startWaitMs: positive(options.startWaitMs, 2000),
  };
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}
