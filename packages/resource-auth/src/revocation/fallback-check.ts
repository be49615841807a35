/**
 * The check while the map is not live (before the first live moment, after any disconnect,
 * and from a reconnect until the resync after it has completed): a token the map already
 * proves revoked is refused at once (the map only grows); otherwise the truth is asked, the
 * token service's principal lookup, and its answer reused for at most `cacheMs`. When that
 * fails too the verdict is 'unavailable' (the caller answers 503): never 'valid' without an
 * answer from the truth.
 */
import type { Logger } from '../platform/logger.js';
import type { PrincipalLookup } from '../platform/token-service-reader.js';
import { PrincipalLookupCache } from './principal-lookup-cache.js';
import type { RevocationMap } from './revocation-map.js';
import type { RevocationMetrics } from './revocation-metrics.js';
import type { RevocationVerdict } from './types.js';

export interface FallbackCheckOptions {
  map: RevocationMap;
  /** Asks the token service for the principal; rejects when it cannot answer. */
  lookup(tenant: string, sub: string): Promise<PrincipalLookup>;
  /** How long an answer is reused, ms (the design caps it at 1000). */
  cacheMs: number;
  metrics: Pick<RevocationMetrics, 'fallbacks' | 'fallbackLookups'>;
  logger: Logger;
}

export class FallbackCheck {
  readonly #lookups: PrincipalLookupCache;

  constructor(private readonly options: FallbackCheckOptions) {
    this.#lookups = new PrincipalLookupCache(options.cacheMs);
  }

  check(
    tenant: string,
    sub: string,
    ver: number,
    credential?: string,
  ): RevocationVerdict | Promise<RevocationVerdict> {
    const { map, metrics } = this.options;
    if (map.isRevoked(tenant, sub, ver, credential)) {
      metrics.fallbacks.inc({ result: 'revoked' });
      return 'revoked';
    }
    const key = PrincipalLookupCache.key(tenant, sub);
    const cached = this.#lookups.get(key, Date.now());
    if (cached !== undefined) {
      const verdict = this.#verdict(cached, tenant, sub, ver, credential);
      metrics.fallbacks.inc({ result: verdict });
      return verdict;
    }
    return this.#lookups
      .lookup(key, () => this.#ask(tenant, sub))
      .then(
        (lookup) => this.#verdict(lookup, tenant, sub, ver, credential),
        () => 'unavailable' as const,
      )
      .then((verdict) => {
        metrics.fallbacks.inc({ result: verdict });
        return verdict;
      });
  }

  /** Forgets the cached answers (the map is live again and knows better). */
  clear(): void {
    this.#lookups.clear();
  }

  async #ask(tenant: string, sub: string): Promise<PrincipalLookup> {
    const { map, metrics } = this.options;
    try {
      const lookup = await this.options.lookup(tenant, sub);
      if (lookup.kind === 'found') map.apply(lookup.entry);
      metrics.fallbackLookups.inc({ result: lookup.kind === 'found' ? 'found' : 'not_found' });
      return lookup;
    } catch (err) {
      metrics.fallbackLookups.inc({ result: 'failed' });
      this.options.logger.warn(
        { err: { message: (err as Error).message } },
        'revocation fallback lookup failed',
      );
      throw err;
    }
  }

  #verdict(
    lookup: PrincipalLookup,
    tenant: string,
    sub: string,
    ver: number,
    credential: string | undefined,
  ): RevocationVerdict {
    // The token verified against the realm's key, so the principal existed when it was minted;
    // the token service keeps principal rows after deletion. "Never existed" therefore means the
    // realm or the principal was purged: no token of it may work. The authority answered, so
    // this is a revocation (401), not an outage (503).
    if (lookup.kind === 'not-found') return 'revoked';
    const { version, deleted, credentials = [] } = lookup.entry;
    if (deleted || ver < version) return 'revoked';
    // The answer names the credentials revoked within the horizon; a token naming none may be of any (decision 0035).
    if (credential === undefined ? credentials.length > 0 : credentials.includes(credential))
      return 'revoked';
    // An event may have arrived since the lookup was sent.
    return this.options.map.verdict(tenant, sub, ver, credential);
  }
}
