import type { Knex } from '@plant/shared/db';

/** How long a realm's list answers for it: an account created on another replica within it may be missed. */
const FRESH_MS = 1000;
/** Past this many realms listed, those older than FRESH_MS are dropped (they answer nothing any more). */
const MAX_REALMS = 1000;

interface Listing {
  readonly ids: ReadonlySet<string>;
  readonly loadedAt: number;
}

interface ListingRead {
  /** False once an account of the realm was created or changed here after the read began. */
  current: boolean;
  readonly ids: Promise<ReadonlySet<string>>;
}

/**
 * The client ids of each realm's live service accounts, read in one query at most once a
 * second per realm: what lets a source that guesses ids be told "no such client" without a
 * query per guess, whatever it guesses. A tenant has a few dozen accounts at most.
 */
export class RealmClientIds {
  /** Bound: the realms listed within the last second (tenants, live data), MAX_REALMS before stale ones go. */
  readonly #listings = new Map<string, Listing>();
  /** Bound: the realms being listed right now. */
  readonly #reads = new Map<string, ListingRead>();

  constructor(private readonly db: Knex) {}

  /** The realm's client ids, listed within the last second; concurrent callers share one query. */
  of(realm: string): ReadonlySet<string> | Promise<ReadonlySet<string>> {
    const listing = this.#listings.get(realm);
    if (listing !== undefined && Date.now() - listing.loadedAt < FRESH_MS) return listing.ids;
    const pending = this.#reads.get(realm);
    if (pending !== undefined) return pending.ids;
    const read: ListingRead = {
      current: true,
      ids: this.db('service_accounts')
        .where({ realm })
        .pluck('sub')
        .then((subs: string[]) => {
          const ids = new Set(subs);
          if (read.current) this.#keep(realm, { ids, loadedAt: Date.now() });
          return ids;
        })
        .finally(() => {
          if (this.#reads.get(realm) === read) this.#reads.delete(realm);
        }),
    };
    this.#reads.set(realm, read);
    return read.ids;
  }

  /** An account of the realm was created or changed here: the next guess lists the realm again, and a list read before is not kept. */
  forget(realm: string): void {
    this.#listings.delete(realm);
    const read = this.#reads.get(realm);
    if (read === undefined) return;
    read.current = false;
    this.#reads.delete(realm);
  }

  #keep(realm: string, listing: Listing): void {
    if (this.#listings.size >= MAX_REALMS) {
      for (const [name, old] of this.#listings)
        if (listing.loadedAt - old.loadedAt >= FRESH_MS) this.#listings.delete(name);
    }
    this.#listings.set(realm, listing);
  }
}
