import { registerCacheMetrics } from '@plant/shared/http';
import { Counter, Gauge, type Registry } from 'prom-client';
import { withTimeout } from '@plant/shared/util';
import type { SigningKeyRepository } from './signing-keys/index.js';
import type { RevocationPublisher } from './revocation/index.js';
import type { RealmProviders } from './oidc/index.js';

/** A scrape waits this long for the signing-key age before it reports none (the database is slow or down). */
const KEY_AGE_TIMEOUT_MS = 1000;

/** The token service's own state on /metrics: unpublished revocations, the realm caches, the oldest signing key. */
export function registerServiceGauges(
  metrics: Registry,
  publisher: Pick<RevocationPublisher, 'pending'>,
  providers: Pick<RealmProviders, 'stats'>,
  signingKeys: Pick<SigningKeyRepository, 'oldestActiveAgeSeconds'>,
): void {
  new Gauge({
    name: 'signing_key_oldest_age_seconds',
    help: 'Seconds since the oldest active signing key of any realm was created (rotate with the CLI before the age the alert names); NaN while the database does not answer',
    registers: [metrics],
    // One aggregate over the active keys (one per realm) per scrape, not per request.
    async collect() {
      const age = await withTimeout(
        signingKeys.oldestActiveAgeSeconds(),
        KEY_AGE_TIMEOUT_MS,
        'signing key age',
      ).catch(() => undefined);
      this.set(age ?? Number.NaN);
    },
  });
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
