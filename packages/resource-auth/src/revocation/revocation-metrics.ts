import { Counter, Gauge, Registry } from 'prom-client';

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
}

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
export function createRevocationMetrics(registry: Registry, gauges: RevocationGauges): RevocationMetrics {
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
  return {
    eventsReceived: new Counter({
      name: 'revocation_events_received_total',
      help: 'Revocation events received on the Redis channel, by result (applied, unchanged, malformed)',
      labelNames: ['result'] as const,
      registers,
    }),
    resyncFailures: new Counter({
      name: 'revocation_resync_failures_total',
      help: 'Revocation resyncs that failed (token service unreachable, error status, malformed body)',
      registers,
    }),
    resyncRequests: new Counter({
      name: 'revocation_resync_requests_total',
      help: 'Revocation resync requests answered, by kind (snapshot; changes: one per page of the change feed)',
      labelNames: ['kind'] as const,
      registers,
    }),
    resyncEntries: new Counter({
      name: 'revocation_resync_entries_total',
      help: 'Revocation entries received by resyncs, by kind (snapshot, changes); a quiet change-feed resync brings none',
      labelNames: ['kind'] as const,
      registers,
    }),
    resyncBytes: new Counter({
      name: 'revocation_resync_bytes_total',
      help: 'Body bytes of revocation resync answers, by kind (snapshot, changes)',
      labelNames: ['kind'] as const,
      registers,
    }),
    expired: new Counter({
      name: 'revocation_entries_expired_total',
      help: 'Revocation entries dropped from memory once no token they revoke can still be live (older than the token lifetime plus the skew margin)',
      registers,
    }),
    fallbacks: new Counter({
      name: 'revocation_fallbacks_total',
      help: 'Checks answered without the live map (subscription down or not yet re-synced), by verdict',
      labelNames: ['result'] as const,
      registers,
    }),
    fallbackLookups: new Counter({
      name: 'revocation_fallback_lookups_total',
      help: 'Principal lookups sent to the token service while the subscription was down, by result (found, not_found, failed)',
      labelNames: ['result'] as const,
      registers,
    }),
  };
}
