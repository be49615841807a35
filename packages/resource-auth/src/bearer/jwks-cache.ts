/**
 * The signing keys of each realm, fetched from the token service's internal API and kept as
 * `KeyObject`s (parsed once, never per request). A token reaches this cache only after every
 * check that needs no key (bearer-token-checks.ts), but it is still unsigned input: whatever it
 * names must not cost a fetch each.
 *
 * - A known kid is answered from memory.
 * - A realm is fetched only if the token service lists it (`RealmDirectory`): a token naming
 *   any other realm costs no JWKS fetch, and at most one shared realm list per interval.
 * - An unknown kid of a cached realm triggers a refetch at most once per `minRefetchMs` per
 *   realm, and each such refetch spends one from a budget shared by all realms
 *   (`FetchBudget`), so made-up kids over many real realms stay bounded too. A refetch the
 *   budget refuses answers `unavailable` (503, Retry-After: 1): the kid may be a real new key,
 *   and a client retrying gets it once the budget allows, where a 401 would make it drop a
 *   good token. An unknown kid that arrives within the interval waits for its end (when that
 *   is at most `UNKNOWN_KID_MAX_WAIT_MS` away) and shares that refetch: a key rotated or an
 *   algorithm switched a moment after this replica's last fetch then verifies a little late
 *   instead of failing, and made-up kids still cost one fetch per realm per interval.
 * - Concurrent requests for the same realm share one fetch.
 * - A key set older than `maxAgeMs` is refetched on the next use of one of its kids (at most
 *   once per realm per `maxAgeMs`, so outside the budget), so a key withdrawn by the token
 *   service stops verifying within that time.
 * - A 404 means the realm was deleted after it was listed: its entry is dropped and the
 *   directory forgets it, so its next token is decided by the realm list again.
 *
 * Bound: memory, `maxBytes` (JWKS_CACHE_MB), each realm one the token service listed and charged
 * `jwksEntryBytes` of its keys; beyond that the least recently used realm is dropped (every key
 * lookup refreshes its realm's recency). Once full, a first fetch pushes another realm out, so
 * first fetches then spend from the budget as well: size the budget above the realms in use.
 */
import { httpCall } from '../platform/http-call.js';
import type { CacheStats } from '../platform/cache-stats.js';
import type { Logger } from '../platform/logger.js';
import { SizedLru } from '../platform/sized-lru.js';
import type { FetchBudget } from './fetch-budget.js';
import { parseJwks, type VerificationKey } from './jwks-document.js';
import type { RealmDirectory } from './realm-directory.js';

export type KeyLookup =
  | { kind: 'key'; key: VerificationKey }
  | { kind: 'unknown-kid' }
  | { kind: 'unknown-realm' }
  | { kind: 'unavailable' };

export interface JwksCacheOptions {
  /** Base URL of the token service's internal API; JWKS at `/internal/v1/realms/<tenant>/jwks`. */
  jwksBaseUrl: string;
  logger: Logger;
  /** Which realms exist: only those are ever fetched. */
  directory: Pick<RealmDirectory, 'has' | 'confirm' | 'forget'>;
  /** Spent by each fetch a kid the cache lacks can cause (see the module comment). */
  budget: Pick<FetchBudget, 'take'>;
  minRefetchMs?: number;
  maxAgeMs?: number;
  fetchTimeoutMs?: number;
  /** Memory for the cached realms, as charged by `jwksEntryBytes`; the least recently used go beyond it (default 64 MB). */
  maxBytes?: number;
}

/**
 * What a realm's entry is charged: the entry and its map, and each public `KeyObject` with its
 * wrapper as it stands once it has verified a token (an RSA key's OpenSSL state grows at its
 * first use; measured: docs/performance.md, "At scale"). A P-256 key costs less: charged the same.
 */
const REALM_ENTRY_BYTES = 512;
const KEY_BYTES = 4608;
export function jwksEntryBytes(keys: number): number {
  return REALM_ENTRY_BYTES + keys * KEY_BYTES;
}
/** A realm about to be fetched is charged as if it had one key. */
const FIRST_FETCH_BYTES = jwksEntryBytes(1);

/** One realm's keys and the state of its last fetch. */
interface RealmKeys {
  keys: Map<string, VerificationKey>;
  /** When the last fetch started (throttles refetches, whatever their outcome). */
  attemptedAt: number;
  /** When the key set was last confirmed by the token service. */
  fetchedAt: number;
  /** The last fetch's outcome: `gone` is a 404 (the entry is dropped at once). */
  outcome: 'none' | 'fetched' | 'failed' | 'gone';
  inflight?: Promise<void>;
  /** The end of the refetch interval, which unknown kids arriving within it wait for together. */
  intervalEnd?: Promise<void>;
}

const UNKNOWN_REALM: KeyLookup = { kind: 'unknown-realm' };
const UNAVAILABLE: KeyLookup = { kind: 'unavailable' };
const MAX_JWKS_BYTES = 256 * 1024;
/** The longest an unknown kid waits for the refetch interval to end; further away, it is refused at once. */
const UNKNOWN_KID_MAX_WAIT_MS = 5_000;

export class JwksCache {
  /** Least recently used first: a lookup moves its realm to the end. */
  private readonly realms: SizedLru<string, RealmKeys>;
  private readonly baseUrl: string;
  private readonly logger: Logger;
  private readonly directory: JwksCacheOptions['directory'];
  private readonly budget: JwksCacheOptions['budget'];
  private readonly minRefetchMs: number;
  private readonly maxAgeMs: number;
  private readonly fetchTimeoutMs: number;
  private readonly aborter = new AbortController();

  constructor(options: JwksCacheOptions) {
    this.baseUrl = options.jwksBaseUrl.replace(/\/+$/, '');
    this.logger = options.logger;
    this.directory = options.directory;
    this.budget = options.budget;
    this.minRefetchMs = options.minRefetchMs ?? 5_000;
    this.maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
    this.fetchTimeoutMs = options.fetchTimeoutMs ?? 2_000;
    this.realms = new SizedLru(options.maxBytes ?? 64 * 1024 * 1024, (entry) =>
      jwksEntryBytes(Math.max(1, entry.keys.size)),
    );
  }

  /** The key `kid` of realm `tenant`. `tenant` must already be a valid realm name. */
  async getKey(tenant: string, kid: string): Promise<KeyLookup> {
    const cached = this.realms.get(tenant);
    if (cached !== undefined) return this.fromCached(tenant, cached, kid);
    if (!this.directory.has(tenant)) {
      const verdict = await this.directory.confirm(tenant);
      if (verdict === 'unknown') return UNKNOWN_REALM;
      if (verdict === 'unavailable') return UNAVAILABLE;
      // Another request may have fetched the realm while this one waited for the list.
      const arrived = this.realms.get(tenant);
      if (arrived !== undefined) return this.fromCached(tenant, arrived, kid);
    }
    if (this.realms.full(FIRST_FETCH_BYTES) && !this.budget.take()) return UNAVAILABLE;
    const entry: RealmKeys = { keys: new Map(), attemptedAt: 0, fetchedAt: 0, outcome: 'none' };
    this.realms.set(tenant, entry);
    await this.refresh(tenant, entry);
    return this.lookup(entry, kid);
  }

  /** How many realms are cached (tests hold the bound to it). */
  get size(): number {
    return this.realms.size;
  }

  /** The cache's size for `/metrics`. */
  stats(): CacheStats {
    return {
      entries: this.realms.size,
      bytes: this.realms.bytes,
      budgetBytes: this.realms.budgetBytes,
      evictions: this.realms.evictions,
    };
  }

  /** Whether the realm's keys are cached, without touching its recency (tests). */
  holds(tenant: string): boolean {
    return this.realms.has(tenant);
  }

  /** Drops every cached key and aborts fetches in flight. */
  close(): void {
    this.aborter.abort();
    this.realms.clear();
  }

  private async fromCached(
    tenant: string,
    entry: RealmKeys,
    kid: string,
    waited = false,
  ): Promise<KeyLookup> {
    const key = entry.keys.get(kid);
    const now = Date.now();
    if (key !== undefined && now - entry.fetchedAt < this.maxAgeMs) return { kind: 'key', key };
    if (entry.inflight === undefined) {
      const untilRefetch = entry.attemptedAt + this.minRefetchMs - now;
      if (untilRefetch > 0) {
        // A kid the last good fetch lacked may be a key made since: wait for the interval's end
        // (once; a fetch started meanwhile has answered for this token) and refetch then.
        if (
          key !== undefined ||
          waited ||
          entry.outcome !== 'fetched' ||
          untilRefetch > UNKNOWN_KID_MAX_WAIT_MS
        )
          return this.lookup(entry, kid);
        await this.intervalEnd(entry, now + untilRefetch);
        return this.fromCached(tenant, entry, kid, true);
      }
      if (key === undefined && !this.budget.take()) return UNAVAILABLE;
    }
    await this.refresh(tenant, entry);
    return this.lookup(entry, kid);
  }

  /**
   * Shared by every unknown kid of the realm waiting within one interval. Re-armed until
   * Date.now() reaches `until`: timers count whole milliseconds of the monotonic clock, and one
   * woke a millisecond before the wall clock reached the interval's end, so the woken lookups
   * found it still open and answered without the refetch (a CI failure).
   */
  private intervalEnd(entry: RealmKeys, until: number): Promise<void> {
    entry.intervalEnd ??= new Promise<void>((resolve) => {
      const wake = () => {
        const left = until - Date.now();
        if (left > 0) {
          setTimeout(wake, left).unref();
          return;
        }
        entry.intervalEnd = undefined;
        resolve();
      };
      wake();
    });
    return entry.intervalEnd;
  }

  private lookup(entry: RealmKeys, kid: string): KeyLookup {
    // After a failed fetch a key we already had stays usable: the token service being
    // briefly down must not reject tokens signed by keys we know.
    const key = entry.keys.get(kid);
    if (key !== undefined) return { kind: 'key', key };
    if (entry.outcome === 'gone') return UNKNOWN_REALM;
    if (entry.outcome === 'failed') return UNAVAILABLE;
    return { kind: 'unknown-kid' };
  }

  private refresh(tenant: string, entry: RealmKeys): Promise<void> {
    entry.inflight ??= this.fetchKeys(tenant, entry).finally(() => {
      entry.inflight = undefined;
    });
    return entry.inflight;
  }

  private async fetchKeys(tenant: string, entry: RealmKeys): Promise<void> {
    const url = `${this.baseUrl}/internal/v1/realms/${encodeURIComponent(tenant)}/jwks`;
    entry.attemptedAt = Date.now();
    try {
      const response = await httpCall(url, {
        headers: { accept: 'application/json' },
        timeoutMs: this.fetchTimeoutMs,
        signal: this.aborter.signal,
      });
      if (response.status === 404) {
        response.discard();
        entry.keys = new Map();
        entry.outcome = 'gone';
        if (this.realms.peek(tenant) === entry) this.realms.delete(tenant);
        this.directory.forget(tenant);
        return;
      }
      if (response.status < 200 || response.status > 299) {
        response.discard();
        throw new Error(`JWKS answered ${response.status}`);
      }
      const { text } = await response.text(MAX_JWKS_BYTES);
      entry.keys = parseJwks(JSON.parse(text), this.logger, tenant);
      if (this.realms.peek(tenant) === entry) this.realms.resize(tenant);
      entry.outcome = 'fetched';
      entry.fetchedAt = Date.now();
    } catch (err) {
      this.logger.warn({ tenant, err: { message: (err as Error).message } }, 'JWKS fetch failed');
      entry.outcome = 'failed';
    }
  }
}
