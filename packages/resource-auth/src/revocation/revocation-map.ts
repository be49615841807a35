import type { LiveRevocationEntry, RevocationEntry } from '../platform/revocation-types.js';
import { ExpiryQueue } from './expiry-queue.js';
import type { RevocationVerdict } from './types.js';

/** A fact read from Postgres (snapshot, change feed): kept until `until`, then no token can need it. */
interface Confirmed {
  version: number;
  deleted: boolean;
  /** The credentials whose tokens are revoked (decision 0035); absent while none is. */
  credentials: Set<string> | undefined;
  /** `performance.now()` after which no token it revokes can still be live. */
  until: number;
}

/** A fact not yet read from Postgres (an event, a fallback answer): kept until a resync requested after it. */
interface Provisional {
  version: number;
  deleted: boolean;
  credentials: Set<string> | undefined;
  /** The resync epoch it was written in (see `beginEpoch`). */
  epoch: number;
}

type Table<T> = Map<string, Map<string, T>>;

/** Version 1, not deleted and no credential named is what absence means already. */
const isNothing = (entry: RevocationEntry) =>
  entry.version <= 1 && !entry.deleted && (entry.credentials?.length ?? 0) === 0;

/** Joins the entry's credentials into `held`; how many were new. */
function joinCredentials(
  held: { credentials: Set<string> | undefined },
  entry: RevocationEntry,
): number {
  if (entry.credentials === undefined) return 0;
  held.credentials ??= new Set();
  const before = held.credentials.size;
  for (const credential of entry.credentials) held.credentials.add(credential);
  return held.credentials.size - before;
}

/**
 * Whether the held credentials revoke a token naming `credential`. A token that names none was
 * minted before tokens named their credential: it may have been obtained with any of them, so
 * any revoked credential of its principal revokes it (decision 0035).
 */
function revokesCredential(held: Set<string> | undefined, credential: string | undefined): boolean {
  if (held === undefined) return false;
  return credential === undefined ? held.size > 0 : held.has(credential);
}

/** Whether `fact` refuses a token of `ver` naming `credential`. */
const refuses = (
  fact: { version: number; deleted: boolean; credentials: Set<string> | undefined },
  ver: number,
  credential: string | undefined,
) => fact.deleted || ver < fact.version || revokesCredential(fact.credentials, credential);

/**
 * The in-memory revocation state: (tenant, sub) -> minimum valid `ver`, or deleted, and the
 * credentials whose tokens are revoked (a token's `cred` claim). A principal that is absent has
 * version 1, is not deleted and has no revoked credential (the token service's defaults), so
 * only principals with something to revoke take memory. A principal's revoked credentials live
 * in its entry and go with it: the entry's time is its latest fact's, so every fact is kept at
 * least its own horizon and at most until the principal's last change is a horizon old.
 *
 * Two tables, both read by `verdict` (a token is refused if either refuses it):
 * - confirmed: what the snapshot and the change feed said (Postgres, the source of truth). Each
 *   entry carries the time after which no token it revokes can be live (its `ttl`, counted from
 *   when the answer arrived) and is dropped then (`expire`): the table holds the changes of one
 *   horizon (the token lifetime plus the skew margin), never the history. The entries wait in
 *   the order they fall due (expiry-queue.ts), so a resync's `expire` costs what expires, not
 *   the table's size.
 * - provisional: what arrived sooner, from Redis events and fallback lookups. A resync requested
 *   after such an entry was written reads every change committed before it, so it carries the
 *   entry's fact into the confirmed table if the fact is real; the provisional entry is then
 *   dropped (`settle`). An event forged on Redis (a huge version, a false deletion) thus makes
 *   this replica stricter only until the next resync, and the table holds at most the events
 *   of one resync period.
 * Every write is a join (version = max, deleted = or), so facts applied in any order, or twice,
 * give the same answer. Lookups go tenant first, then sub, with no key concatenation: the hot
 * path allocates nothing.
 */
export class RevocationMap {
  readonly #confirmed: Table<Confirmed> = new Map();
  readonly #provisional: Table<Provisional> = new Map();
  #confirmedSize = 0;
  #provisionalSize = 0;
  /** Incremented by `beginEpoch` at the start of each resync. */
  #epoch = 0;
  /** The confirmed entries by `until`: `expire` takes only those due. */
  readonly #expiries = new ExpiryQueue();

  /** Entries held, both tables: a principal's entry and each credential it names count one each. */
  get size(): number {
    return this.#confirmedSize + this.#provisionalSize;
  }

  /** Merges a fact that did not come from Postgres. Returns true when it raised the version or newly marked the deletion. */
  apply(entry: RevocationEntry): boolean {
    if (isNothing(entry)) return false;
    const stricter = this.#raises(entry);
    let subs = this.#provisional.get(entry.tenant);
    const current = subs?.get(entry.sub);
    if (current !== undefined) {
      current.version = Math.max(current.version, entry.version);
      current.deleted ||= entry.deleted;
      this.#provisionalSize += joinCredentials(current, entry);
      current.epoch = this.#epoch;
      return stricter;
    }
    if (subs === undefined) {
      subs = new Map();
      this.#provisional.set(entry.tenant, subs);
    }
    const added: Provisional = {
      version: entry.version,
      deleted: entry.deleted,
      credentials: undefined,
      epoch: this.#epoch,
    };
    this.#provisionalSize += 1 + joinCredentials(added, entry);
    subs.set(entry.sub, added);
    return stricter;
  }

  /**
   * 'valid' iff the principal is not deleted, `ver` is at least its version and the token's
   * credential (its `cred` claim, undefined when it names none) is not revoked. Never 'unavailable'.
   */
  verdict(tenant: string, sub: string, ver: number, credential?: string): RevocationVerdict {
    const confirmed = this.#confirmed.get(tenant)?.get(sub);
    if (confirmed !== undefined && refuses(confirmed, ver, credential)) return 'revoked';
    if (this.#provisionalSize === 0) return 'valid';
    const provisional = this.#provisional.get(tenant)?.get(sub);
    return provisional !== undefined && refuses(provisional, ver, credential) ? 'revoked' : 'valid';
  }

  /** True when the map alone proves the token revoked (then no other source can make it valid). */
  isRevoked(tenant: string, sub: string, ver: number, credential?: string): boolean {
    return this.verdict(tenant, sub, ver, credential) === 'revoked';
  }

  /** Starts a resync; every provisional write from now on belongs to the returned epoch. */
  beginEpoch(): number {
    this.#epoch += 1;
    return this.#epoch;
  }

  /** The snapshot: it replaces the confirmed table (entries `received` at that `performance.now()`). */
  replace(entries: readonly LiveRevocationEntry[], received: number): void {
    this.#confirmed.clear();
    this.#confirmedSize = 0;
    this.#expiries.clear();
    this.merge(entries, received);
  }

  /** Changes from the feed, joined into the confirmed table. */
  merge(entries: readonly LiveRevocationEntry[], received: number): void {
    for (const entry of entries) {
      if (isNothing(entry)) continue;
      const until = received + entry.ttl * 1000;
      let subs = this.#confirmed.get(entry.tenant);
      const current = subs?.get(entry.sub);
      if (current !== undefined) {
        current.version = Math.max(current.version, entry.version);
        current.deleted ||= entry.deleted;
        this.#confirmedSize += joinCredentials(current, entry);
        if (until > current.until) {
          current.until = until;
          this.#expiries.push({ until, tenant: entry.tenant, sub: entry.sub });
        }
        continue;
      }
      if (subs === undefined) {
        subs = new Map();
        this.#confirmed.set(entry.tenant, subs);
      }
      const added: Confirmed = {
        version: entry.version,
        deleted: entry.deleted,
        credentials: undefined,
        until,
      };
      this.#confirmedSize += 1 + joinCredentials(added, entry);
      subs.set(entry.sub, added);
      this.#expiries.push({ until, tenant: entry.tenant, sub: entry.sub });
    }
  }

  /**
   * After the resync of `epoch` has been applied: drops the provisional entries written before it
   * was requested (it read every change committed before then, so it confirmed them or they were
   * never true). Entries written during the resync stay: it may predate them. Returns how many went.
   */
  settle(epoch: number): number {
    return this.#sweep(
      this.#provisional,
      (entry) => entry.epoch < epoch,
      (removed) => (this.#provisionalSize -= removed),
    );
  }

  /** Drops the confirmed entries whose time has passed at `now` (`performance.now()`); how many went. */
  expire(now: number): number {
    let removed = 0;
    for (
      let due = this.#expiries.popDue(now);
      due !== undefined;
      due = this.#expiries.popDue(now)
    ) {
      const subs = this.#confirmed.get(due.tenant);
      const entry = subs?.get(due.sub);
      // A later change pushed the entry's time back: its own item is still queued.
      if (entry === undefined || entry.until > now) continue;
      subs!.delete(due.sub);
      if (subs!.size === 0) this.#confirmed.delete(due.tenant);
      removed += 1 + (entry.credentials?.size ?? 0);
    }
    this.#confirmedSize -= removed;
    return removed;
  }

  /** Whether `entry` raises the version the map holds for its principal (both tables joined) or newly marks the deletion. */
  #raises(entry: RevocationEntry): boolean {
    const confirmed = this.#confirmed.get(entry.tenant)?.get(entry.sub);
    const provisional = this.#provisional.get(entry.tenant)?.get(entry.sub);
    const version = Math.max(confirmed?.version ?? 1, provisional?.version ?? 1);
    const deleted = confirmed?.deleted === true || provisional?.deleted === true;
    const newCredential = (entry.credentials ?? []).some(
      (credential) =>
        confirmed?.credentials?.has(credential) !== true &&
        provisional?.credentials?.has(credential) !== true,
    );
    return entry.version > version || (entry.deleted && !deleted) || newCredential;
  }

  #sweep<T extends { credentials: Set<string> | undefined }>(
    table: Table<T>,
    doomed: (entry: T) => boolean,
    count: (removed: number) => void,
  ): number {
    let removed = 0;
    for (const [tenant, subs] of table) {
      for (const [sub, entry] of subs) {
        if (doomed(entry)) {
          subs.delete(sub);
          removed += 1 + (entry.credentials?.size ?? 0);
        }
      }
      if (subs.size === 0) table.delete(tenant);
    }
    count(removed);
    return removed;
  }
}
