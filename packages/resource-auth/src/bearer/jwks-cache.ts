/**
 * The signing keys of each realm, fetched from the token service's internal API and
 * kept as `KeyObject`s (parsed once, never per request).
 *
 * - A known kid is answered from memory.
 * - An unknown kid triggers a refetch, at most once per `minRefetchMs` per realm, so a
 *   flood of tokens with made-up kids costs one request every few seconds, not one each.
 * - Concurrent requests for the same realm share one fetch.
 * - A 404 (unknown realm) is remembered for `notFoundTtlMs`.
 * - A key set older than `maxAgeMs` is refetched on the next use, so a key withdrawn by
 *   the token service stops verifying within that time.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { Logger } from '@plant/shared';

export type KeyLookup =
  | { kind: 'key'; key: KeyObject }
  | { kind: 'unknown-kid' }
  | { kind: 'unknown-realm' }
  | { kind: 'unavailable' };

export interface JwksCacheOptions {
  /** Base URL of the token service's internal API; JWKS at `/internal/v1/realms/<tenant>/jwks`. */
  jwksBaseUrl: string;
  logger: Logger;
  minRefetchMs?: number;
  notFoundTtlMs?: number;
  maxAgeMs?: number;
  fetchTimeoutMs?: number;
  /** Realms kept in memory; the least recently fetched are dropped beyond this. */
  maxRealms?: number;
}

interface RealmKeys {
  keys: Map<string, KeyObject>;
  /** When the last fetch started (throttles refetches, whatever their outcome). */
  attemptedAt: number;
  /** When the key set was last confirmed by the token service. */
  fetchedAt: number;
  notFound: boolean;
  failed: boolean;
  inflight?: Promise<void>;
}

const MIN_RSA_BITS = 2048;
const MAX_JWKS_BYTES = 256 * 1024;

export class JwksCache {
  private readonly realms = new Map<string, RealmKeys>();
  private readonly baseUrl: string;
  private readonly logger: Logger;
  private readonly minRefetchMs: number;
  private readonly notFoundTtlMs: number;
  private readonly maxAgeMs: number;
  private readonly fetchTimeoutMs: number;
  private readonly maxRealms: number;
  private readonly aborter = new AbortController();

  constructor(options: JwksCacheOptions) {
    this.baseUrl = options.jwksBaseUrl.replace(/\/+$/, '');
    this.logger = options.logger;
    this.minRefetchMs = options.minRefetchMs ?? 5_000;
    this.notFoundTtlMs = options.notFoundTtlMs ?? 5_000;
    this.maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
    this.fetchTimeoutMs = options.fetchTimeoutMs ?? 2_000;
    this.maxRealms = options.maxRealms ?? 10_000;
  }

  /** The key `kid` of realm `tenant`. `tenant` must already be a valid realm name. */
  async getKey(tenant: string, kid: string): Promise<KeyLookup> {
    const known = this.realms.get(tenant);
    if (known) {
      const now = Date.now();
      const key = known.keys.get(kid);
      if (key && now - known.fetchedAt < this.maxAgeMs) return { kind: 'key', key };
      const throttle = known.notFound ? this.notFoundTtlMs : this.minRefetchMs;
      if (known.inflight === undefined && now - known.attemptedAt < throttle) return this.lookup(known, kid);
    }
    return this.lookup(await this.refresh(tenant), kid);
  }

  /** Drops every cached key and aborts fetches in flight. */
  close(): void {
    this.aborter.abort();
    this.realms.clear();
  }

  private lookup(realm: RealmKeys, kid: string): KeyLookup {
    // After a failed fetch a key we already had stays usable: the token service being
    // briefly down must not reject tokens signed by keys we know.
    const key = realm.keys.get(kid);
    if (key) return { kind: 'key', key };
    if (realm.failed) return { kind: 'unavailable' };
    if (realm.notFound) return { kind: 'unknown-realm' };
    return { kind: 'unknown-kid' };
  }

  private refresh(tenant: string): Promise<RealmKeys> {
    let realm = this.realms.get(tenant);
    if (!realm) {
      realm = { keys: new Map(), attemptedAt: 0, fetchedAt: 0, notFound: false, failed: false };
      this.remember(tenant, realm);
    }
    const target = realm;
    target.inflight ??= this.fetchKeys(tenant, target).finally(() => {
      target.inflight = undefined;
    });
    return target.inflight.then(() => target);
  }

  private remember(tenant: string, realm: RealmKeys): void {
    this.realms.set(tenant, realm);
    if (this.realms.size > this.maxRealms) {
      const oldest = this.realms.keys().next().value;
      if (oldest !== undefined) this.realms.delete(oldest);
    }
  }

  private async fetchKeys(tenant: string, realm: RealmKeys): Promise<void> {
    const url = `${this.baseUrl}/internal/v1/realms/${encodeURIComponent(tenant)}/jwks`;
    realm.attemptedAt = Date.now();
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.any([this.aborter.signal, AbortSignal.timeout(this.fetchTimeoutMs)]),
        redirect: 'error',
      });
      if (response.status === 404) {
        await response.body?.cancel();
        realm.keys = new Map();
        realm.notFound = true;
        realm.failed = false;
        realm.fetchedAt = Date.now();
        return;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`JWKS answered ${response.status}`);
      }
      const text = await response.text();
      if (text.length > MAX_JWKS_BYTES) throw new Error('JWKS document is too large');
      realm.keys = parseJwks(JSON.parse(text), this.logger, tenant);
      realm.notFound = false;
      realm.failed = false;
      realm.fetchedAt = Date.now();
    } catch (err) {
      this.logger.warn({ tenant, err: { message: (err as Error).message } }, 'JWKS fetch failed');
      realm.failed = true;
    }
  }
}

/** The usable RS256 verification keys of a JWKS document, by kid. Unusable entries are skipped. */
export function parseJwks(document: unknown, logger: Logger, tenant: string): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  const list = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) throw new Error('JWKS document has no keys array');
  for (const jwk of list) {
    if (typeof jwk !== 'object' || jwk === null) continue;
    const { kty, kid, use, alg, n, e } = jwk as Record<string, unknown>;
    if (kty !== 'RSA' || typeof kid !== 'string' || kid === '' || typeof n !== 'string' || typeof e !== 'string') continue;
    if (use !== undefined && use !== 'sig') continue;
    if (alg !== undefined && alg !== 'RS256') continue;
    try {
      const key = createPublicKey({ key: { kty, n, e }, format: 'jwk' });
      if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) continue;
      keys.set(kid, key);
    } catch {
      logger.warn({ tenant, kid }, 'JWKS entry is not a valid RSA public key');
    }
  }
  return keys;
}
