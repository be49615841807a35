import type { Knex } from '@plant/shared/db';
import { lockRealm } from '../realms/index.js';
import { ownerMayReceive, recordVerification } from '../signal-outbox/index.js';

export type DeliveryMethod = 'push' | 'poll';
export type StreamStatus = 'enabled' | 'paused' | 'disabled';

export interface StreamRow {
  id: string;
  realm: string;
  owner_sub: string;
  delivery_method: DeliveryMethod;
  endpoint_url: string | null;
  authorization_header_sealed: Buffer | null;
  events_requested: string[];
  description: string | null;
  status: StreamStatus;
  status_reason: string | null;
  queued: number;
  backlog_limit: number;
  dropped_events: string | number;
  attempts: number;
  last_error: string | null;
  created_at: Date;
}

/** What a receiver sets on its stream; each given part is written (`null` clears). */
export interface StreamSettings {
  deliveryMethod?: DeliveryMethod;
  endpointUrl?: string | null;
  authorizationHeaderSealed?: Buffer | null;
  eventsRequested?: string[];
  description?: string | null;
}

export interface NewStream extends Required<Pick<StreamSettings, 'deliveryMethod'>> {
  id: string;
  realm: string;
  ownerSub: string;
  endpointUrl: string | null;
  authorizationHeaderSealed: Buffer | null;
  eventsRequested: string[];
  description: string | null;
  backlogLimit: number;
}

/** One queued event, oldest first. */
export interface QueuedEventRow {
  seq: string;
  jti: string;
  event_type: string;
  sub: string | null;
  event: Record<string, unknown>;
  created_at: Date;
}

/** A push stream this replica holds the lease of. */
export interface ClaimedStream {
  id: string;
  realm: string;
  owner_sub: string;
  endpoint_url: string;
  authorization_header_sealed: Buffer | null;
  attempts: number;
}

/** A stream, found only by its owner: another account's (or realm's) stream is no stream. */
export interface StreamKey {
  realm: string;
  owner: string;
  id: string;
}

export interface SignalStreamRepository {
  /** Whether the account may receive signals now (allowed, live and enabled). */
  isReceiver(realm: string, sub: string): Promise<boolean>;
  /** Under the realm's lock, so the cap is exact. */
  create(stream: NewStream, perTenant: number): Promise<'created' | 'limit-reached'>;
  find(key: StreamKey): Promise<StreamRow | undefined>;
  list(realm: string, owner: string): Promise<StreamRow[]>;
  update(key: StreamKey, settings: StreamSettings): Promise<StreamRow | undefined>;
  delete(key: StreamKey): Promise<boolean>;
  /** Disabling forgets what the stream holds (SSF 1.0 §8.1.2: a disabled stream holds no events). */
  setStatus(
    key: StreamKey,
    status: StreamStatus,
    reason: string | null,
  ): Promise<StreamRow | undefined>;
  /** At most `limit` subjects per stream: 'limit-reached' beyond. */
  setSubject(
    key: StreamKey,
    sub: string,
    mode: 'added' | 'removed',
    limit: number,
  ): Promise<'ok' | 'limit-reached' | undefined>;
  /** Queues a verification event unless the last was less than `minIntervalSeconds` ago. */
  verify(
    key: StreamKey,
    state: string | undefined,
    minIntervalSeconds: number,
  ): Promise<'queued' | 'too-soon' | 'backlog-full' | undefined>;
  /** The oldest `max` events (and whether there are more). */
  oldest(streamId: string, max: number): Promise<{ events: QueuedEventRow[]; more: boolean }>;
  /** Removes the stream's events named by `jtis` (a jti of another stream removes nothing); the count removed. */
  acknowledge(streamId: string, jtis: readonly string[]): Promise<number>;
  /** Removes delivered events by position (push). */
  delivered(streamId: string, seqs: readonly string[]): Promise<void>;
  /**
   * Leases push streams with events due (enabled, next attempt reached, lease free or lapsed),
   * per tenant at most `perTenant` less what `busy` says this replica already pushes of it, the
   * streams due longest first: `for update skip locked`, so replicas share the streams and never
   * deliver one together.
   */
  claimPush(
    leaseSeconds: number,
    perTenant: number,
    busy: ReadonlyMap<string, number>,
  ): Promise<ClaimedStream[]>;
  /** Ends the lease: `retryInMs` undefined resets the attempts, otherwise the next attempt waits. */
  release(streamId: string, outcome: { retryInMs?: number; error?: string | null }): Promise<void>;
  /** Over every stream: events waiting and events dropped (the metrics). */
  totals(): Promise<{ queued: number; dropped: number }>;
}

const STREAM_COLUMNS = [
  'id',
  'realm',
  'owner_sub',
  'delivery_method',
  'endpoint_url',
  'authorization_header_sealed',
  'events_requested',
  'description',
  'status',
  'status_reason',
  'queued',
  'backlog_limit',
  'dropped_events',
  'attempts',
  'last_error',
  'created_at',
];

function settingsColumns(settings: StreamSettings): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  if (settings.deliveryMethod !== undefined) columns.delivery_method = settings.deliveryMethod;
  if (settings.endpointUrl !== undefined) columns.endpoint_url = settings.endpointUrl;
  if (settings.authorizationHeaderSealed !== undefined)
    columns.authorization_header_sealed = settings.authorizationHeaderSealed;
  if (settings.eventsRequested !== undefined)
    columns.events_requested = JSON.stringify(settings.eventsRequested);
  if (settings.description !== undefined) columns.description = settings.description;
  return columns;
}

type Owned = (q: Knex | Knex.Transaction, key: StreamKey) => Knex.QueryBuilder;

export function createSignalStreamRepository(db: Knex): SignalStreamRepository {
  const owned: Owned = (q, key) =>
    q('ssf_streams').where({ realm: key.realm, owner_sub: key.owner, id: key.id });
  return {
    ...streamConfigurationQueries(db, owned),
    ...streamControlQueries(db, owned),
    ...deliveryQueries(db),
  };
}

/** A receiver's streams: created under the realm's cap, read, updated, deleted. */
function streamConfigurationQueries(
  db: Knex,
  owned: Owned,
): Pick<SignalStreamRepository, 'isReceiver' | 'create' | 'find' | 'list' | 'update' | 'delete'> {
  return {
    async isReceiver(realm, sub) {
      const row = await db('service_accounts as sa')
        .join('principals as p', 'p.sub', 'sa.sub')
        .where({ 'sa.realm': realm, 'sa.sub': sub, 'sa.receive_signals': true })
        .whereNull('sa.disabled_at')
        .whereNull('p.deleted_at')
        .first('sa.sub');
      return row !== undefined;
    },
    create(stream, perTenant) {
      return db.transaction(async (trx) => {
        if (!(await lockRealm(trx, stream.realm))) return 'limit-reached';
        const counted = await trx('ssf_streams')
          .where({ realm: stream.realm })
          .count<{ count: string }[]>({ count: '*' })
          .first();
        if (Number(counted?.count ?? 0) >= perTenant) return 'limit-reached';
        await trx('ssf_streams').insert({
          id: stream.id,
          realm: stream.realm,
          owner_sub: stream.ownerSub,
          backlog_limit: stream.backlogLimit,
          ...settingsColumns(stream),
        });
        return 'created';
      });
    },
    async find(key) {
      return owned(db, key).first(STREAM_COLUMNS);
    },
    async list(realm, owner) {
      return db('ssf_streams')
        .where({ realm, owner_sub: owner })
        .orderBy(['created_at', 'id'])
        .select(STREAM_COLUMNS);
    },
    async update(key, settings) {
      const columns = settingsColumns(settings);
      if (Object.keys(columns).length > 0) {
        // A new push target starts a new delivery history: no inherited back-off.
        if (columns.endpoint_url !== undefined)
          Object.assign(columns, { attempts: 0, next_attempt_at: db.fn.now() });
        await owned(db, key).update(columns);
      }
      return owned(db, key).first(STREAM_COLUMNS);
    },
    async delete(key) {
      return (await owned(db, key).delete()) > 0;
    },
  };
}

/** A stream's status, subjects and verification: each in a transaction on the locked stream. */
function streamControlQueries(
  db: Knex,
  owned: Owned,
): Pick<SignalStreamRepository, 'setStatus' | 'setSubject' | 'verify'> {
  return {
    setStatus(key, status, reason) {
      return db.transaction(async (trx): Promise<StreamRow | undefined> => {
        const row = await owned(trx, key).forUpdate().first('id');
        if (row === undefined) return undefined;
        const columns: Record<string, unknown> = { status, status_reason: reason };
        if (status === 'disabled') {
          await trx('ssf_stream_events').where({ stream_id: key.id }).delete();
          columns.queued = 0;
        }
        if (status === 'enabled')
          Object.assign(columns, { attempts: 0, next_attempt_at: trx.fn.now() });
        await owned(trx, key).update(columns);
        // Wakes a deliverer for what a paused stream held.
        await trx.raw('select pg_notify(?, ?)', ['ssf_stream_events', key.id]);
        return (await owned(trx, key).first(STREAM_COLUMNS)) as StreamRow | undefined;
      });
    },
    setSubject(key, sub, mode, limit) {
      return db.transaction(async (trx) => {
        const row = await owned(trx, key).forUpdate().first('id');
        if (row === undefined) return undefined;
        const known = await trx('ssf_stream_subjects')
          .where({ stream_id: key.id, sub })
          .first('sub');
        if (known === undefined) {
          const counted = await trx('ssf_stream_subjects')
            .where({ stream_id: key.id })
            .count<{ count: string }[]>({ count: '*' })
            .first();
          if (Number(counted?.count ?? 0) >= limit) return 'limit-reached';
          await trx('ssf_stream_subjects').insert({ stream_id: key.id, sub, mode });
        } else await trx('ssf_stream_subjects').where({ stream_id: key.id, sub }).update({ mode });
        return 'ok';
      });
    },
    verify(key, state, minIntervalSeconds) {
      return db.transaction(async (trx) => {
        const stream = await owned(trx, key)
          .forUpdate()
          .first(
            'id',
            'queued',
            'backlog_limit',
            'status',
            trx.raw('coalesce(verified_at > now() - make_interval(secs => ?), false) as too_soon', [
              minIntervalSeconds,
            ]),
          );
        if (stream === undefined) return undefined;
        if (stream.too_soon) return 'too-soon';
        if (stream.queued >= stream.backlog_limit) return 'backlog-full';
        await recordVerification(trx, stream, state);
        await owned(trx, key).update({ verified_at: trx.fn.now() });
        return 'queued';
      });
    },
  };
}

/** What delivery and polls read and change: queued events, push leases, the totals. */
function deliveryQueries(
  db: Knex,
): Pick<
  SignalStreamRepository,
  'oldest' | 'acknowledge' | 'delivered' | 'claimPush' | 'release' | 'totals'
> {
  return {
    async oldest(streamId, max) {
      const rows: QueuedEventRow[] = await db('ssf_stream_events')
        .where({ stream_id: streamId })
        .orderBy('seq')
        .limit(max + 1)
        .select('seq', 'jti', 'event_type', 'sub', 'event', 'created_at');
      return { events: rows.slice(0, max), more: rows.length > max };
    },
    acknowledge(streamId, jtis) {
      if (jtis.length === 0) return Promise.resolve(0);
      return db.transaction(async (trx) => {
        await trx('ssf_streams').where({ id: streamId }).forUpdate().first('id');
        const removed = await trx('ssf_stream_events')
          .where({ stream_id: streamId })
          .whereIn('jti', jtis)
          .delete();
        if (removed > 0)
          await trx('ssf_streams').where({ id: streamId }).decrement('queued', removed);
        return removed;
      });
    },
    async delivered(streamId, seqs) {
      if (seqs.length === 0) return;
      // One statement (one round trip on the delivery path): the rows go and the count follows.
      await db.raw(
        `with removed as (
           delete from ssf_stream_events where stream_id = ? and seq = any(?::bigint[]) returning 1
         )
         update ssf_streams set queued = queued - (select count(*) from removed) where id = ?`,
        [streamId, [...seqs], streamId],
      );
    },
    claimPush: (leaseSeconds, perTenant, busy) => claimPush(db, leaseSeconds, perTenant, busy),
    async release(streamId, { retryInMs, error }) {
      await db('ssf_streams')
        .where({ id: streamId })
        .update(
          retryInMs === undefined
            ? { lease_until: null, attempts: 0, last_error: error ?? null }
            : {
                lease_until: null,
                attempts: db.raw('attempts + 1'),
                next_attempt_at: db.raw('now() + make_interval(secs => ?)', [retryInMs / 1000]),
                last_error: error ?? null,
              },
        );
    },
    async totals() {
      const row = await db('ssf_streams').first(
        db.raw('coalesce(sum(queued), 0)::bigint as queued'),
        db.raw('coalesce(sum(dropped_events), 0)::bigint as dropped'),
      );
      return { queued: Number(row?.queued ?? 0), dropped: Number(row?.dropped ?? 0) };
    },
  };
}

/** `claimPush` (see the repository's interface): one statement leasing what is due. */
async function claimPush(
  db: Knex,
  leaseSeconds: number,
  perTenant: number,
  busy: ReadonlyMap<string, number>,
): Promise<ClaimedStream[]> {
  // Due: the conditions are asked again where the rows are locked, so a stream another
  // replica leased after this statement's snapshot is skipped, not leased twice.
  const due = (q: Knex.QueryBuilder) =>
    q
      .where({ 's.delivery_method': 'push', 's.status': 'enabled' })
      // What an owner no longer allowed to receive still holds waits (delivered if allowed again).
      .whereExists(ownerMayReceive(db))
      .where('s.queued', '>', 0)
      .where('s.next_attempt_at', '<=', db.fn.now())
      .where((w) => w.whereNull('s.lease_until').orWhere('s.lease_until', '<', db.fn.now()));
  // Each tenant's due streams in the order they fell due, numbered from its busy lanes on.
  const ranked = db('ssf_streams as s')
    .modify(due)
    .leftJoin(
      db.raw('unnest(?::text[], ?::int[]) as busy(realm, lanes)', [
        [...busy.keys()],
        [...busy.values()],
      ]),
      'busy.realm',
      's.realm',
    )
    .select(
      's.id',
      db.raw(
        'coalesce(busy.lanes, 0) + row_number() over (partition by s.realm order by s.next_attempt_at, s.id) as lane',
      ),
    );
  const picked = db('ssf_streams as s')
    .modify(due)
    .whereIn('s.id', db.from(ranked.as('r')).where('r.lane', '<=', perTenant).select('r.id'))
    .forUpdate()
    .skipLocked()
    .select('s.id');
  return db('ssf_streams')
    .whereIn('id', picked)
    .update({ lease_until: db.raw('now() + make_interval(secs => ?)', [leaseSeconds]) })
    .returning([
      'id',
      'realm',
      'owner_sub',
      'endpoint_url',
      'authorization_header_sealed',
      'attempts',
    ]);
}
