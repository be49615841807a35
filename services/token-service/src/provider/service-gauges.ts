import { registerCacheMetrics } from '@plant/shared/http';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RevocationPublisher } from '../domain/revocation-publisher.js';
import type { RealmProviders } from './realm-providers.js';

/** The token service's own state on /metrics: unpublished revocations and the realm caches. */
export function registerServiceGauges(
  metrics: Registry,
  publisher: Pick<RevocationPublisher, 'pending'>,
  providers: Pick<RealmProviders, 'stats'>,
): void {
  new Gauge({
    name: 'revocation_publish_pending',
    help: 'Principals whose latest revocation event Redis has not taken yet; republished until it does (alert when above 0 for long)',
    registers: [metrics],
    collect() {
      this.set(publisher.pending);
    },
  });
  registerCacheMetrics(metrics, {
    realm_providers: () => providers.stats().providers,
    realm_keys: () => providers.stats().keys,
  });
  new Counter({
    name: 'realm_provider_builds_total',
    help: "Realm providers built (a realm's first request, after its provider was dropped for memory, after a key rotation)",
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(providers.stats().builds);
    },
  });
}
