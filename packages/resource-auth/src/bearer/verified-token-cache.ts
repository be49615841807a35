import type { Principal } from './principal.js';

/**
 * Principals of tokens whose signature and claims already checked out, keyed by the raw
 * token string, so a client reusing its token skips the RSA verification. Bounded (least
 * recently used entries go first) and each entry dies when its token expires. Revocation
 * is NOT cached here: it is checked on every request.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, { principal: Principal; expiresAtMs: number }>();

  constructor(private readonly maxEntries: number) {}

  get(token: string, nowMs: number): Principal | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    this.entries.delete(token);
    if (nowMs >= entry.expiresAtMs) return undefined;
    this.entries.set(token, entry);
    return entry.principal;
  }

  set(token: string, principal: Principal, expiresAtMs: number): void {
    if (this.maxEntries <= 0) return;
    this.entries.delete(token);
    this.entries.set(token, { principal, expiresAtMs });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
