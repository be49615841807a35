import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What the revocation map reports on `/metrics`. */
export interface RevocationMetrics {
  eventsReceived: Counter<'result'>;
  resyncFailures: Counter;
  /** Requests of each kind (`snapshot`, `changes`: one per page), the entries and the body bytes they brought. */
  resyncRequests: Counter<'kind'>;
  resyncEntries: Counter<'kind'>;
  resyncBytes: Counter<'kind'>;
  /** Confirmed entries dropped because no token they revoke can still be live. */
  expired: Counter;
  fallbacks: Counter<'result'>;
  fallbackLookups: Counter<'result'>;
  /** From the token service publishing an event to this process applying it. */
  eventDelay: Histogram;
}

/**
 * Buckets of `revocation_event_delay_seconds`: fine below the 10 ms objective (docs/deploy.md,
 * "Objectives"), coarse above it, where only "how late" matters.
 */
export const EVENT_DELAY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5,
] as const;

export interface RevocationGauges {
  resyncAgeSeconds(): number;
  subscriptionUp(): boolean;
  live(): boolean;
  entries(): number;
}

/**
 * Registers the revocation metrics on `registry`. One revocation sync per registry: prom-client
 * refuses a second metric of the same name.
 */
// long: one declaration per metric (name, help, labels, collect): data.
export function createRevocationMetrics(
  registry: Registry,
  gauges: RevocationGauges,
): RevocationMetrics {
  const registers = [registry];
  new Gauge({
    name: 'revocation_resync_age_seconds',
    help: 'Seconds since the last completed revocation resync (snapshot or changes) was requested; +Inf before the first',
    registers,
    collect() {
      this.set(gauges.resyncAgeSeconds());
    },
  });
  new Gauge({
    name: 'revocation_subscription_up',
    help: '1 while subscribed to the revocation channel on Redis',
    registers,
    collect() {
      this.set(gauges.subscriptionUp() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'revocation_live',
    help: '1 while checks are answered from memory (subscribed and a resync completed since); 0 means fallback lookups',
    registers,
    collect() {
      this.set(gauges.live() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'revocation_map_entries',
    help: 'Principals with revoked tokens held in memory',
    registers,
    collect() {
      this.set(gauges.entries());
    },
  });
  const counter = <L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
  ) => new Counter<L>({ name, help, labelNames, registers });
  return {
    eventsReceived: counter(
      'revocation_events_received_total',
      'Revocation events received on the Redis channel, by result (applied, unchanged, malformed)',
      ['result'],
    ),
    resyncFailures: counter(
      'revocation_resync_failures_total',
      'Revocation resyncs that failed (token service unreachable, error status, malformed body)',
    ),
    resyncRequests: counter(
      'revocation_resync_requests_total',
      'Revocation resync requests answered, by kind (snapshot; changes: one per page of the change feed)',
      ['kind'],
    ),
    resyncEntries: counter(
      'revocation_resync_entries_total',
      'Revocation entries received by resyncs, by kind (snapshot, changes); a quiet change-feed resync brings none',
      ['kind'],
    ),
    resyncBytes: counter(
      'revocation_resync_bytes_total',
      'Body bytes of revocation resync answers, by kind (snapshot, changes)',
      ['kind'],
    ),
    expired: counter(
      'revocation_entries_expired_total',
      'Revocation entries dropped from memory once no token they revoke can still be live (older than the token lifetime plus the skew margin)',
    ),
    fallbacks: counter(
      'revocation_fallbacks_total',
      'Checks answered without the live map (subscription down or not yet re-synced), by verdict',
      ['result'],
    ),
    eventDelay: new Histogram({
      name: 'revocation_event_delay_seconds',
      help: 'Seconds from the token service publishing a revocation event to this process applying it (two hosts: includes their clock skew)',
      buckets: [...EVENT_DELAY_BUCKETS],
      registers,
    }),
    fallbackLookups: counter(
      'revocation_fallback_lookups_total',
      'Principal lookups sent to the token service while the subscription was down, by result (found, not_found, failed)',
      ['result'],
    ),
  };
}
