import { Counter, Gauge, Registry } from 'prom-client';

/** What the revocation map reports on `/metrics`. */
export interface RevocationMetrics {
  eventsReceived: Counter<'result'>;
  snapshotFailures: Counter;
  fallbacks: Counter<'result'>;
  fallbackLookups: Counter<'result'>;
}

export interface RevocationGauges {
  snapshotAgeSeconds(): number;
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
    name: 'revocation_snapshot_age_seconds',
    help: 'Seconds since the last revocation snapshot was requested (that snapshot loaded); +Inf before the first',
    registers,
    collect() {
      this.set(gauges.snapshotAgeSeconds());
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
    help: '1 while checks are answered from memory (subscribed and a snapshot loaded since); 0 means fallback lookups',
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
    snapshotFailures: new Counter({
      name: 'revocation_snapshot_failures_total',
      help: 'Revocation snapshot loads that failed (token service unreachable, error status, malformed body)',
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
