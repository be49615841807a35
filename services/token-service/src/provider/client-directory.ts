import type { Knex } from '@plant/shared';
import { findClientCredential, type ClientCredentialRow } from '../data-access/service-account-repository.js';

const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;
// Our client_ids are 35 characters; anything far longer names nothing and must not fill the cache.
const MAX_CLIENT_ID_LENGTH = 128;
const NO_ROW = Object.freeze({ row: undefined });

/**
 * Service-account credentials for the token endpoint, cached so a token costs no query
 * in the steady state. Every change (reset, delete, role, grants) publishes a revocation
 * event; each replica drops the entry when it hears it, so an old secret fails at once.
 * The TTL bounds staleness should an event be lost (a token minted from a stale entry
 * carries the old `ver` and is refused by resource servers anyway).
 */
export class ClientDirectory {
  readonly #entries = new Map<string, { row: ClientCredentialRow | undefined; expires: number }>();

  constructor(private readonly db: Knex) {}

  #key(realm: string, clientId: string): string {
    return `${realm}\u0000${clientId}`;
  }

  /**
   * The cached answer while it is fresh, without waiting: `{ row }` (row undefined for an id
   * known not to exist), or undefined when `find` must ask the database.
   */
  cached(realm: string, clientId: string): { row: ClientCredentialRow | undefined } | undefined {
    if (clientId.length > MAX_CLIENT_ID_LENGTH) return NO_ROW;
    const entry = this.#entries.get(this.#key(realm, clientId));
    return entry !== undefined && entry.expires > Date.now() ? entry : undefined;
  }

  async find(realm: string, clientId: string): Promise<ClientCredentialRow | undefined> {
    const cached = this.cached(realm, clientId);
    if (cached !== undefined) return cached.row;
    const key = this.#key(realm, clientId);
    const row = await findClientCredential(this.db, realm, clientId);
    // Unknown ids are cached too (briefly) so guessing client_ids costs no queries.
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { row, expires: Date.now() + (row ? TTL_MS : TTL_MS / 10) });
    return row;
  }

  invalidate(realm: string, clientId: string): void {
    this.#entries.delete(this.#key(realm, clientId));
  }

  clear(): void {
    this.#entries.clear();
  }
}
