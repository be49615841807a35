import type { Grant, Knex, ServiceAccountRole } from '@plant/shared';
import { GRANTS_JSON } from './service-account-repository.js';

/** What the token endpoint needs to authenticate a client and mint its token, read together. */
export interface ClientCredentialRow {
  sub: string;
  realm: string;
  role: ServiceAccountRole;
  grants: Grant[];
  secret_digest: string;
  token_version: number;
}

export interface ClientCredentialRepository {
  /**
   * The cached answer while it is fresh, without waiting: `{ row }` (row undefined for an id
   * known not to exist), or undefined when `find` must ask the database. The same row object
   * comes back until the account changes or its entry expires.
   */
  cached(realm: string, clientId: string): { readonly row: ClientCredentialRow | undefined } | undefined;
  find(realm: string, clientId: string): Promise<ClientCredentialRow | undefined>;
  /** Drops one account's entry (it changed). */
  forget(realm: string, clientId: string): void;
  /** Drops every entry (change events may have been missed). */
  forgetAll(): void;
  /** Sets last_used_at, at most once a minute per account whichever replica asks. */
  touchLastUsed(subs: string[]): Promise<void>;
}

const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;
// Our client_ids are 35 characters; anything far longer names nothing and must not fill the cache.
const MAX_CLIENT_ID_LENGTH = 128;
// Postgres text cannot hold NUL (a query with one fails): such an id names nothing either.
const NUL = '\u0000';
const NO_ROW = Object.freeze({ row: undefined });

/**
 * Service-account credentials, cached so a token costs no query in the steady state. Every
 * change (reset, delete, role, grants) is announced as a revocation event, and each replica
 * drops the entry when it hears it (`forget`), so an old secret fails at once. The TTL bounds
 * staleness should an event be lost (a token minted from a stale entry carries the old `ver`
 * and is refused by resource servers anyway). Unknown ids are cached too, briefly, so guessing
 * client_ids costs no queries.
 */
export function createClientCredentialRepository(db: Knex): ClientCredentialRepository {
  const entries = new Map<string, { row: ClientCredentialRow | undefined; expires: number }>();
  const keyOf = (realm: string, clientId: string) => `${realm}\u0000${clientId}`;

  const repository: ClientCredentialRepository = {
    cached(realm, clientId) {
      if (clientId.length > MAX_CLIENT_ID_LENGTH || clientId.includes(NUL)) return NO_ROW;
      const entry = entries.get(keyOf(realm, clientId));
      return entry !== undefined && entry.expires > Date.now() ? entry : undefined;
    },
    async find(realm, clientId) {
      const cached = repository.cached(realm, clientId);
      if (cached !== undefined) return cached.row;
      const row: ClientCredentialRow | undefined = await db('service_accounts as sa')
        .join('principals as p', 'p.sub', 'sa.sub')
        .where({ 'sa.realm': realm, 'sa.sub': clientId })
        .whereNull('p.deleted_at')
        .first('sa.sub', 'sa.realm', 'sa.role', 'sa.secret_digest', 'p.token_version', db.raw(GRANTS_JSON));
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(keyOf(realm, clientId), { row, expires: Date.now() + (row ? TTL_MS : TTL_MS / 10) });
      return row;
    },
    forget(realm, clientId) {
      entries.delete(keyOf(realm, clientId));
    },
    forgetAll() {
      entries.clear();
    },
    async touchLastUsed(subs) {
      if (subs.length === 0) return;
      await db('service_accounts')
        .whereIn('sub', subs)
        .andWhere((q) => q.whereNull('last_used_at').orWhereRaw("last_used_at < now() - interval '1 minute'"))
        .update({ last_used_at: db.fn.now() });
    },
  };
  return repository;
}
