import type { CacheStats } from '../platform/cache-stats.js';
import { SizedLru } from '../platform/sized-lru.js';
import type { Principal } from './principal.js';

/**
 * What an entry is charged: the token string (one byte a character: tokens are ASCII) and the
 * principal with its grants, the map entry and the object around them (docs/performance.md,
 * "At scale").
 */
const ENTRY_OVERHEAD_BYTES = 512;

interface Verified {
  principal: Principal;
  expiresAtMs: number;
  bytes: number;
}

/**
 * Principals of tokens whose signature and claims already checked out, keyed by the raw
 * token string, so a client reusing its token skips the RSA verification. Bounded by memory
 * (least recently used entries go first: tokens in use, each alive at most its lifetime) and
 * each entry dies when its token expires. Revocation is NOT cached here: it is checked on
 * every request. A budget of 0 disables the cache.
 */
export class VerifiedTokenCache {
  readonly #entries: SizedLru<string, Verified> | undefined;

  constructor(budgetBytes: number) {
    this.#entries = budgetBytes > 0 ? new SizedLru(budgetBytes, (entry) => entry.bytes) : undefined;
  }

  get(token: string, nowMs: number): Principal | undefined {
    const entry = this.#entries?.get(token);
    if (entry === undefined) return undefined;
    if (nowMs < entry.expiresAtMs) return entry.principal;
    this.#entries!.delete(token);
    return undefined;
  }

  set(token: string, principal: Principal, expiresAtMs: number): void {
    this.#entries?.set(token, {
      principal,
      expiresAtMs,
      bytes: token.length + JSON.stringify(principal.grants).length + ENTRY_OVERHEAD_BYTES,
    });
  }

  stats(): CacheStats {
    const lru = this.#entries;
    return lru === undefined
      ? { entries: 0, bytes: 0, budgetBytes: 0, evictions: 0 }
      : {
          entries: lru.size,
          bytes: lru.bytes,
          budgetBytes: lru.budgetBytes,
          evictions: lru.evictions,
        };
  }

  clear(): void {
    this.#entries?.clear();
  }
}
