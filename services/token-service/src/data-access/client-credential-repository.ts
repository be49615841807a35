import type { Grant, Knex, ServiceAccountRole } from '@plant/shared';
import { RealmClientIds } from './realm-client-id-repository.js';
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
   * comes back until the account changes.
   */
  cached(realm: string, clientId: string): { readonly row: ClientCredentialRow | undefined } | undefined;
  /** The credential, from the cache or Postgres; a read that a change overtook is read again, never cached. */
  find(realm: string, clientId: string): Promise<ClientCredentialRow | undefined>;
  /**
   * As `find`, for a source that guesses: an id the realm's list of accounts (read at most once
   * a second per realm, so an account created within that second may be missed) does not name
   * is answered "no such client" without a query of its own.
   */
  findListed(realm: string, clientId: string): Promise<ClientCredentialRow | undefined>;
  /** False once `row` stopped being the account's credential here (changed, or no longer vouched for): no token may be issued with it. */
  isCurrent(row: ClientCredentialRow): boolean;
  /** The account changed or was created: its entry goes, a grant holding its row issues nothing, a read in flight is read again, the realm is listed again. */
  forget(realm: string, clientId: string): void;
  /** As `forget`, for every account (change events may have been missed). */
  forgetAll(): void;
  /** Sets last_used_at, at most once a minute per account whichever replica asks. */
  touchLastUsed(subs: string[]): Promise<void>;
}

export interface CredentialCacheLimits {
  /**
   * How long an account's entry is fresh (10 min): a backstop only, since every change reaches
   * the cache as an event or, within seconds, through the change feed (follow-credential-changes.ts).
   */
  ttlMs: number;
  /** How long an unknown id is remembered (3 s). */
  unknownTtlMs: number;
  /** Unknown ids cached (10,000), oldest first out. */
  maxUnknown: number;
  /** Accounts cached (100,000): real accounts, so live data bounds them first; past this, long-expired entries go, then the oldest. */
  maxKnown: number;
}

const DEFAULT_LIMITS: CredentialCacheLimits = { ttlMs: 600_000, unknownTtlMs: 3_000, maxUnknown: 10_000, maxKnown: 100_000 };
/** A read overtaken by a change this many times in a row is handed out retired (the grant fails) rather than tried forever. */
const MAX_READS = 5;
// Our client_ids are 35 characters; anything far longer names nothing and must not fill the cache.
const MAX_CLIENT_ID_LENGTH = 128;
// Postgres text cannot hold NUL (a query with one fails): such an id names nothing either.
const NUL = '\u0000';
const NO_ROW = Object.freeze({ row: undefined });

interface KnownEntry {
  readonly row: ClientCredentialRow;
  expires: number;
}

/** A read in flight; `stale` once a change was heard after it began (its answer may predate the change). */
interface CredentialRead {
  stale: boolean;
  answer: Promise<ClientCredentialRow | undefined>;
}

const keyOf = (realm: string, clientId: string) => `${realm}\u0000${clientId}`;
const sameCredential = (a: ClientCredentialRow, b: ClientCredentialRow) => a.token_version === b.token_version && a.secret_digest === b.secret_digest;

/**
 * Service-account credentials, cached so a token costs no query in the steady state. Every
 * change (reset, delete, role, grants) is announced as a revocation event; each replica hears
 * it (`forget`), and the replica that made the change hears it before its API answers. From
 * then on:
 *  - the entry is gone, and its row is retired: a grant that already holds it (it compared the
 *    old secret before the change) is refused when it asks `isCurrent` before answering;
 *  - a read that was in flight is marked stale: its answer may predate the commit, so it is
 *    neither cached nor returned, and the read is made again.
 * So once this replica has heard a change, it issues no token with the old credential. Should an
 * event be lost, the change feed's follower (domain/follow-credential-changes.ts) forgets the
 * account within seconds, and the TTL is the last backstop (a token minted from a stale entry
 * carries the old `ver` and is refused by resource servers anyway). Unknown ids are cached too, briefly and
 * apart from real accounts (a flood of guesses cannot push a real account out), so repeating a
 * guess costs no query; `findListed` makes new guesses cheap too.
 */
class CachedClientCredentials implements ClientCredentialRepository {
  /** Bound: accounts that exist (an entry goes when its account changes or is found gone), `maxKnown` at most. */
  readonly #known = new Map<string, KnownEntry>();
  /** Bound: `maxUnknown`, oldest first out. */
  readonly #unknown = new Map<string, number>();
  /** Bound: the ids being read right now; each leaves when its read settles. */
  readonly #reads = new Map<string, CredentialRead>();
  readonly #retired = new WeakSet<ClientCredentialRow>();
  readonly #listings: RealmClientIds;

  constructor(
    private readonly db: Knex,
    private readonly limits: CredentialCacheLimits,
  ) {
    this.#listings = new RealmClientIds(db);
  }

  cached(realm: string, clientId: string): { readonly row: ClientCredentialRow | undefined } | undefined {
    if (clientId.length > MAX_CLIENT_ID_LENGTH || clientId.includes(NUL)) return NO_ROW;
    const key = keyOf(realm, clientId);
    const now = Date.now();
    const entry = this.#known.get(key);
    if (entry !== undefined) return entry.expires > now ? entry : undefined;
    const until = this.#unknown.get(key);
    return until !== undefined && until > now ? NO_ROW : undefined;
  }

  find(realm: string, clientId: string): Promise<ClientCredentialRow | undefined> {
    const hit = this.cached(realm, clientId);
    if (hit !== undefined) return Promise.resolve(hit.row);
    const key = keyOf(realm, clientId);
    return (this.#reads.get(key) ?? this.#startRead(key, realm, clientId)).answer;
  }

  async findListed(realm: string, clientId: string): Promise<ClientCredentialRow | undefined> {
    const hit = this.cached(realm, clientId);
    if (hit !== undefined) return hit.row;
    const listed = await this.#listings.of(realm);
    return listed.has(clientId) ? this.find(realm, clientId) : undefined;
  }

  isCurrent(row: ClientCredentialRow): boolean {
    return !this.#retired.has(row);
  }

  forget(realm: string, clientId: string): void {
    const key = keyOf(realm, clientId);
    const entry = this.#known.get(key);
    if (entry !== undefined) {
      this.#retired.add(entry.row);
      this.#known.delete(key);
    }
    this.#unknown.delete(key);
    const read = this.#reads.get(key);
    if (read !== undefined) read.stale = true;
    this.#listings.forget(realm);
  }

  forgetAll(): void {
    for (const entry of this.#known.values()) this.#retired.add(entry.row);
    this.#known.clear();
    this.#unknown.clear();
    for (const read of this.#reads.values()) read.stale = true;
  }

  async touchLastUsed(subs: string[]): Promise<void> {
    if (subs.length === 0) return;
    await this.db('service_accounts')
      .whereIn('sub', subs)
      .andWhere((q) => q.whereNull('last_used_at').orWhereRaw("last_used_at < now() - interval '1 minute'"))
      .update({ last_used_at: this.db.fn.now() });
  }

  #startRead(key: string, realm: string, clientId: string): CredentialRead {
    const read: CredentialRead = { stale: false, answer: Promise.resolve(undefined) };
    read.answer = this.#read(read, key, realm, clientId).finally(() => {
      if (this.#reads.get(key) === read) this.#reads.delete(key);
    });
    this.#reads.set(key, read);
    return read;
  }

  async #read(read: CredentialRead, key: string, realm: string, clientId: string): Promise<ClientCredentialRow | undefined> {
    for (let attempt = 1; ; attempt += 1) {
      read.stale = false;
      const row: ClientCredentialRow | undefined = await this.db('service_accounts as sa')
        .join('principals as p', 'p.sub', 'sa.sub')
        .where({ 'sa.realm': realm, 'sa.sub': clientId })
        .whereNull('p.deleted_at')
        .first('sa.sub', 'sa.realm', 'sa.role', 'sa.secret_digest', 'p.token_version', this.db.raw(GRANTS_JSON));
      if (!read.stale) return this.#remember(key, row);
      if (attempt === MAX_READS) {
        if (row !== undefined) this.#retired.add(row);
        return row;
      }
    }
  }

  /** Caches a read that no change overtook; an unchanged credential keeps its row object (and the client built from it). */
  #remember(key: string, row: ClientCredentialRow | undefined): ClientCredentialRow | undefined {
    const now = Date.now();
    const entry = this.#known.get(key);
    if (row === undefined) {
      if (entry !== undefined) {
        this.#retired.add(entry.row);
        this.#known.delete(key);
      }
      if (this.#unknown.size >= this.limits.maxUnknown) this.#unknown.delete(this.#unknown.keys().next().value!);
      this.#unknown.set(key, now + this.limits.unknownTtlMs);
      return undefined;
    }
    this.#unknown.delete(key);
    if (entry !== undefined && sameCredential(entry.row, row)) {
      entry.expires = now + this.limits.ttlMs;
      return entry.row;
    }
    if (entry !== undefined) this.#retired.add(entry.row);
    else if (this.#known.size >= this.limits.maxKnown) this.#evictKnown(now);
    this.#known.set(key, { row, expires: now + this.limits.ttlMs });
    return row;
  }

  /** Drops entries expired for a whole TTL (no grant still holds their row), then the oldest, until there is room. */
  #evictKnown(now: number): void {
    for (const [key, entry] of this.#known) {
      if (entry.expires > now - this.limits.ttlMs) continue;
      this.#retired.add(entry.row);
      this.#known.delete(key);
    }
    for (const [key, entry] of this.#known) {
      if (this.#known.size < this.limits.maxKnown) break;
      this.#retired.add(entry.row);
      this.#known.delete(key);
    }
  }

}

/** `limits` default to production's; tests make them small. */
export function createClientCredentialRepository(db: Knex, limits: Partial<CredentialCacheLimits> = {}): ClientCredentialRepository {
  return new CachedClientCredentials(db, { ...DEFAULT_LIMITS, ...limits });
}
