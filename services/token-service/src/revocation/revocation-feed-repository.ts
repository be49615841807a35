import type { Knex } from '@plant/shared/db';
import type { LiveRevocationEntry } from '@plant/shared/token-service-client';

/** A row of the change feed with its position (a decimal int64 as a string: pg returns int8 as text). */
export interface FeedChange extends LiveRevocationEntry {
  position: string;
}

export interface FeedPage {
  /** The highest pruned position: a reader behind it may have missed pruned changes. */
  floor: string;
  /** The highest position taken and committed so far (or the floor, when every row is pruned). */
  head: string;
  /** Up to `limit` changes after the asked position, ascending; `ttl` ≤ 0 for one no longer needed. */
  changes: FeedChange[];
}

export interface RevocationFeedRepository {
  /** The credentials of the principal revoked less than `horizonSeconds` ago (the fallback lookup's answer names them). */
  revokedCredentials(realm: string, sub: string, horizonSeconds: number): Promise<string[]>;
  /**
   * Every principal changed less than `horizonSeconds` ago, its latest change only, and the head
   * position read in the same statement (so continuing after it misses nothing and repeats
   * nothing that matters). Bounded by the changes of one horizon, never by history.
   */
  snapshot(horizonSeconds: number): Promise<{ head: string; entries: LiveRevocationEntry[] }>;
  /** The changes after `after` (at most `limit`), with the floor and the head, in one statement. */
  changesAfter(after: string, limit: number, horizonSeconds: number): Promise<FeedPage>;
  /** Deletes up to `batch` changes older than the horizon and raises the floor past them; how many. */
  pruneChanges(horizonSeconds: number, batch: number): Promise<number>;
  /** Deletes up to `batch` principals deleted longer than the horizon ago (no token of theirs can live); how many. */
  purgeDeletedPrincipals(horizonSeconds: number, batch: number): Promise<number>;
}

/** The head: the highest position committed, or the floor once every row is pruned. */
const HEAD =
  'greatest(f.pruned_through, coalesce((select max(position) from revocation_changes), 0))';
/** Seconds the change is still needed: its time plus the horizon, less now (rounded up). */
const TTL = 'ceil(extract(epoch from (changed_at - now())) + :horizon)::int';

interface ChangeRow {
  position: string;
  realm: string;
  sub: string;
  version: number;
  deleted: boolean;
  /** Null for a change of the version; else the credential whose tokens it revokes. */
  credential: string | null;
  ttl: number;
}

/** A row as the wire has it: a credential's row names it in `credentials` (readers of the previous release drop the field). */
function toLive(row: Omit<ChangeRow, 'position'>): LiveRevocationEntry {
  const entry: LiveRevocationEntry = {
    tenant: row.realm,
    sub: row.sub,
    version: row.version,
    deleted: row.deleted,
    ttl: row.ttl,
  };
  if (row.credential !== null) entry.credentials = [row.credential];
  return entry;
}

// long: a repository factory, one SQL statement per method
export function createRevocationFeedRepository(db: Knex): RevocationFeedRepository {
  return {
    async revokedCredentials(realm, sub, horizonSeconds) {
      const rows = (await db('revocation_changes')
        .where({ realm, sub })
        .whereNotNull('credential')
        .andWhereRaw('changed_at > now() - make_interval(secs => ?)', [horizonSeconds])
        .distinct('credential')) as Array<{ credential: string }>;
      return rows.map((row) => row.credential);
    },

    async snapshot(horizonSeconds) {
      const { rows } = (await db.raw(
        `select ${HEAD}::text as head, e.realm, e.sub, e.version, e.deleted, e.credential, e.ttl
         from revocation_feed f
         left join lateral (
           select distinct on (realm, sub, credential) realm, sub, version, deleted, credential, ${TTL} as ttl
           from revocation_changes
           where changed_at > now() - make_interval(secs => :horizon)
           order by realm, sub, credential, position desc
         ) e on true`,
        { horizon: horizonSeconds },
      )) as { rows: Array<Partial<ChangeRow> & { head: string }> };
      const head = rows[0]!.head;
      const entries = rows
        .filter((row): row is ChangeRow & { head: string } => row.realm != null && row.ttl! > 0)
        .map(toLive);
      return { head, entries };
    },

    async changesAfter(after, limit, horizonSeconds) {
      const { rows } = (await db.raw(
        `select f.pruned_through::text as floor, ${HEAD}::text as head,
                c.position::text as position, c.realm, c.sub, c.version, c.deleted, c.credential, c.ttl
         from revocation_feed f
         left join lateral (
           select position, realm, sub, version, deleted, credential, ${TTL} as ttl
           from revocation_changes
           where position > :after::bigint
           order by position
           limit :limit
         ) c on true
         order by c.position`,
        { after, limit, horizon: horizonSeconds },
      )) as { rows: Array<Partial<ChangeRow> & { floor: string; head: string }> };
      const { floor, head } = rows[0]!;
      const changes = rows
        .filter((row): row is ChangeRow & { floor: string; head: string } => row.position != null)
        .map((row) => ({ ...toLive(row), position: row.position }));
      return { floor, head, changes };
    },

    async pruneChanges(horizonSeconds, batch) {
      // The delete and the floor move in one statement: a reader sees both or neither.
      const { rows } = (await db.raw(
        `with doomed as (
           delete from revocation_changes
           where position in (
             select position from revocation_changes
             where changed_at <= now() - make_interval(secs => :horizon)
             order by position
             limit :batch)
           returning position
         ), raised as (
           update revocation_feed set pruned_through = greatest(pruned_through, (select max(position) from doomed))
           where exists (select 1 from doomed)
           returning pruned_through
         )
         select (select count(*) from doomed)::int as pruned, (select count(*) from raised)::int as raised`,
        { horizon: horizonSeconds, batch },
      )) as { rows: Array<{ pruned: number }> };
      return rows[0]!.pruned;
    },

    async purgeDeletedPrincipals(horizonSeconds, batch) {
      // Deletion removed the credentials, grants and users rows in its transaction; the guards
      // keep a principal something still points at (never expected) from failing every batch.
      const { rowCount } = (await db.raw(
        `delete from principals
         where sub in (
           select p.sub from principals p
           where p.deleted_at <= now() - make_interval(secs => :horizon)
             and not exists (select 1 from service_accounts s where s.sub = p.sub)
             and not exists (select 1 from users u where u.sub = p.sub)
             and not exists (select 1 from grants g where g.sub = p.sub)
           limit :batch)`,
        { horizon: horizonSeconds, batch },
      )) as { rowCount: number };
      return rowCount;
    },
  };
}
