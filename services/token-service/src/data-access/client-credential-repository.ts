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
  /** The account changed: its entry goes, a grant holding its row issues nothing, a read in flight is read again. */
  forget(realm: string, clientId: string): void;
  /** As `forget`, for every account (change events may have been missed). */
  forgetAll(): void;
  /** Sets last_used_at, at most once a minute per account whichever replica asks. */
  touchLastUsed(subs: string[]): Promise<void>;
}

const TTL_MS = 30_000;
const UNKNOWN_TTL_MS = TTL_MS / 10;
const MAX_UNKNOWN = 10_000;
/** Known entries are real accounts, so live data bounds them; past this, long-expired ones are dropped first. */
const MAX_KNOWN = 100_000;
const LISTING_FRESH_MS = 1000;
const MAX_LISTINGS = 1000;
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

interface Listing {
  readonly ids: ReadonlySet<string>;
  readonly loadedAt: number;
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
 * So once this replica has heard a change, it issues no token with the old credential. The TTL
 * bounds staleness should an event be lost (a token minted from a stale entry carries the old
 * `ver` and is refused by resource servers anyway). Unknown ids are cached too, briefly and
 * apart from real accounts (a flood of guesses cannot push a real account out), so repeating a
 * guess costs no query; `findListed` makes new guesses cheap too.
 */
class CachedClientCredentials implements ClientCredentialRepository {
  /** Bound: the accounts read within the TTL (live data), MAX_KNOWN at most. */
  readonly #known = new Map<string, KnownEntry>();
  /** Bound: MAX_UNKNOWN, oldest first out. */
  readonly #unknown = new Map<string, number>();
  /** Bound: the ids being read right now; each leaves when its read settles. */
  readonly #reads = new Map<string, CredentialRead>();
  readonly #retired = new WeakSet<ClientCredentialRow>();
  /** Bound: the realms listed within the last second, MAX_LISTINGS before stale ones are dropped. */
  readonly #listings = new Map<string, Listing>();
  readonly #listingReads = new Map<string, Promise<Listing>>();

  constructor(private readonly db: Knex) {}

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
    const listing = await this.#listing(realm);
    return listing.ids.has(clientId) ? this.find(realm, clientId) : undefined;
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
  }

  forgetAll(): void {
    for (const entry of this.#known.values()) this.#retired.add(entry.row);
    this.#known.clear();
    this.#unknown.clear();
    for (const read of this.#reads.values()) read.stale = true;
    this.#listings.clear();
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
      if (this.#unknown.size >= MAX_UNKNOWN) this.#unknown.delete(this.#unknown.keys().next().value!);
      this.#unknown.set(key, now + UNKNOWN_TTL_MS);
      return undefined;
    }
    this.#unknown.delete(key);
    if (entry !== undefined && sameCredential(entry.row, row)) {
      entry.expires = now + TTL_MS;
      return entry.row;
    }
    if (entry !== undefined) this.#retired.add(entry.row);
    else if (this.#known.size >= MAX_KNOWN) this.#evictKnown(now);
    this.#known.set(key, { row, expires: now + TTL_MS });
    return row;
  }

  /** Drops entries expired for a whole TTL (no grant still holds their row), then the oldest, until there is room. */
  #evictKnown(now: number): void {
    for (const [key, entry] of this.#known) {
      if (entry.expires > now - TTL_MS) continue;
      this.#retired.add(entry.row);
      this.#known.delete(key);
    }
    for (const [key, entry] of this.#known) {
      if (this.#known.size < MAX_KNOWN) break;
      this.#retired.add(entry.row);
      this.#known.delete(key);
    }
  }

  #listing(realm: string): Listing | Promise<Listing> {
    const listing = this.#listings.get(realm);
    if (listing !== undefined && Date.now() - listing.loadedAt < LISTING_FRESH_MS) return listing;
    const pending = this.#listingReads.get(realm);
    if (pending !== undefined) return pending;
    const read = this.db('service_accounts')
      .where({ realm })
      .pluck('sub')
      .then((subs: string[]) => {
        const loaded: Listing = { ids: new Set(subs), loadedAt: Date.now() };
        if (this.#listings.size >= MAX_LISTINGS) {
          for (const [name, old] of this.#listings) if (loaded.loadedAt - old.loadedAt >= LISTING_FRESH_MS) this.#listings.delete(name);
        }
        this.#listings.set(realm, loaded);
        return loaded;
      })
      .finally(() => this.#listingReads.delete(realm));
    this.#listingReads.set(realm, read);
    return read;
  }
}

export function createClientCredentialRepository(db: Knex): ClientCredentialRepository {
  return new CachedClientCredentials(db);
}
