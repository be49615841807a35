import type { RevocationEntry } from '@plant/shared';
import type { RevocationVerdict } from './types.js';

interface MapEntry {
  version: number;
  deleted: boolean;
  /** The sync epoch in which this entry was last raised or confirmed (see `sweep`). */
  epoch: number;
}

/**
 * The in-memory revocation state: (tenant, sub) -> minimum valid `ver`, or deleted.
 *
 * Every write from an event or a lookup is a join (version = max, deleted = or), so applying
 * the same facts in any order, or twice, gives the same map: an event racing a snapshot, a
 * stale snapshot after an event, or a replayed message can never lower a version or undelete
 * a principal. A snapshot is the one exception, and the reason Redis need not be trusted: it
 * *replaces* what was written before it was requested (`confirm`), because Postgres had
 * committed every real change by then. So an event forged on Redis (a huge version, a false
 * deletion) can only make this replica stricter, and only until the next resync.
 * A principal that is absent has version 1 and is not deleted (the token service's
 * defaults), so only principals with something to revoke take memory.
 *
 * Lookups go tenant first, then sub, with no key concatenation: the hot path allocates nothing.
 */
export class RevocationMap {
  readonly #tenants = new Map<string, Map<string, MapEntry>>();
  #size = 0;
  /** Incremented by `beginEpoch` at the start of each snapshot load. */
  #epoch = 0;

  get size(): number {
    return this.#size;
  }

  /** Merges one fact. Returns true when it raised the version or newly marked the deletion. */
  apply(entry: RevocationEntry): boolean {
    let subs = this.#tenants.get(entry.tenant);
    const current = subs?.get(entry.sub);
    if (current !== undefined) {
      const raised = entry.version > current.version || (entry.deleted && !current.deleted);
      if (entry.version > current.version) current.version = entry.version;
      if (entry.deleted) current.deleted = true;
      current.epoch = this.#epoch;
      return raised;
    }
    // Version 1 and not deleted is what absence means already.
    if (entry.version <= 1 && !entry.deleted) return false;
    if (subs === undefined) {
      subs = new Map();
      this.#tenants.set(entry.tenant, subs);
    }
    subs.set(entry.sub, { version: entry.version, deleted: entry.deleted, epoch: this.#epoch });
    this.#size += 1;
    return true;
  }

  /**
   * A fact of the snapshot of `epoch`: what was written before that snapshot was requested
   * is replaced by it (Postgres is the source of truth); what was written during the load
   * (an event the snapshot may predate) is joined with it as `apply` does.
   */
  confirm(entry: RevocationEntry, epoch: number): void {
    const current = this.#tenants.get(entry.tenant)?.get(entry.sub);
    if (current === undefined || current.epoch >= epoch) {
      this.apply(entry);
      return;
    }
    current.version = entry.version;
    current.deleted = entry.deleted;
    current.epoch = this.#epoch;
  }

  /** 'valid' iff the principal is not deleted and `ver` is at least its version. Never 'unavailable'. */
  verdict(tenant: string, sub: string, ver: number): RevocationVerdict {
    const entry = this.#tenants.get(tenant)?.get(sub);
    if (entry === undefined) return 'valid';
    return entry.deleted || ver < entry.version ? 'revoked' : 'valid';
  }

  /** True when the map alone proves the token revoked (then no other source can make it valid). */
  isRevoked(tenant: string, sub: string, ver: number): boolean {
    return this.verdict(tenant, sub, ver) === 'revoked';
  }

  /** Starts a snapshot load; every write from now on belongs to the returned epoch. */
  beginEpoch(): number {
    this.#epoch += 1;
    return this.#epoch;
  }

  /**
   * After the snapshot of `epoch` was applied: drops entries last written before that
   * snapshot was requested. Such an entry's fact was committed before the snapshot was
   * read, so if the snapshot no longer lists it the token service has let it go (a
   * deletion older than a token lifetime: no token of it can still be live). Entries
   * written during the load (events, fallback answers) are kept: the snapshot may
   * predate them.
   */
  sweep(epoch: number): number {
    let removed = 0;
    for (const [tenant, subs] of this.#tenants) {
      for (const [sub, entry] of subs) {
        if (entry.epoch < epoch) {
          subs.delete(sub);
          removed += 1;
        }
      }
      if (subs.size === 0) this.#tenants.delete(tenant);
    }
    this.#size -= removed;
    return removed;
  }
}
