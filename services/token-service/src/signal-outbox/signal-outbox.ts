/**
 * The Shared Signals outbox: the one place security events are built and queued. A repository
 * that changes a service account calls `recordSignals` with its transaction, so an event exists
 * exactly when its change committed (a crash after the commit loses nothing: the event waits in
 * the stream's queue; a rollback announces nothing). Each event is queued once per stream that
 * wants it: the stream's realm, an event type it requested, a subject it did not leave out, and a
 * status other than disabled (SSF 1.0 §8.1.2: a disabled stream holds nothing). The streams' rows
 * are locked in id order for the rest of the transaction, so a stream's events are numbered in
 * commit order (per-stream order for the deliverer) and its backlog count is exact. A full
 * backlog refuses the event and counts it (`dropped_events`, shown in the stream's status and
 * the `ssf_events_dropped` metric): the receiver is told it missed events, the change itself
 * never fails for a receiver that stopped reading. `pg_notify` wakes the deliverers and long
 * polls of every replica at commit.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '@plant/shared/db';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type';

export const EVENT_TYPES = {
  credentialChange: `${CAEP}/credential-change`,
  sessionRevoked: `${CAEP}/session-revoked`,
  accountDisabled: `${RISC}/account-disabled`,
  accountEnabled: `${RISC}/account-enabled`,
  accountPurged: `${RISC}/account-purged`,
  credentialCompromise: `${RISC}/credential-compromise`,
  verification: 'https://schemas.openid.net/secevent/ssf/event-type/verification',
} as const;

/** What a transmitter delivers (SSF 1.0 `events_supported`); verification is always delivered. */
export const SUPPORTED_EVENT_TYPES: readonly string[] = Object.values(EVENT_TYPES);

/** The channel `pg_notify` wakes deliverers and long polls on; the payload is a stream id. */
export const SIGNAL_CHANNEL = 'ssf_stream_events';

/**
 * A service account's credentials, as CAEP `credential_type`: the secret is a shared secret the
 * account presents, CAEP's `password`; keys and trusted workloads have no CAEP value, so they
 * carry values of our own (CAEP 1.0 §3.3 allows values the parties agree on; documented in
 * docs/shared-signals.md).
 */
export type AccountCredential = 'secret' | 'key' | 'trust';
const CREDENTIAL_TYPES: Record<AccountCredential, string> = {
  secret: 'password',
  key: 'client-public-key',
  trust: 'trusted-workload',
};

/**
 * What a credential change says in `reason_admin` (CAEP 1.0 §2): receivers that show the reason
 * of an event show it for every CAEP event, so a credential change names what happened, as a
 * session revocation does.
 */
const CREDENTIAL_CHANGE_REASONS: Record<AccountCredential, Record<CredentialChange, string>> = {
  secret: {
    create: "The service account's client secret was created",
    update: "The service account's client secret was reset",
    delete: "The service account's client secret was removed",
  },
  key: {
    create: 'A key of the service account was added',
    update: 'A key of the service account was replaced',
    delete: 'A key of the service account was removed',
  },
  trust: {
    create: 'A trusted workload of the service account was added',
    update: 'A trusted workload of the service account was replaced',
    delete: 'A trusted workload of the service account was removed',
  },
};

/** CAEP `change_type` of a credential change. */
export type CredentialChange = 'create' | 'update' | 'delete';

/** A change to report, as the repository that made it knows it. */
export type AccountSignal =
  | {
      type: 'credential-change';
      credential: AccountCredential;
      change: CredentialChange;
    }
  | { type: 'session-revoked'; reason: string }
  | { type: 'account-disabled' }
  | { type: 'account-enabled' }
  | { type: 'account-purged' }
  | { type: 'credential-compromise'; credential: AccountCredential; reason?: string };

/** Who made the change (CAEP `initiating_entity`): an Account Admin, or the platform itself (a leak report). */
export type InitiatingEntity = 'admin' | 'system';

interface QueuedEvent {
  type: string;
  /** The subject's sub (the `iss_sub` subject is built at signing, with the issuer); null: the stream. */
  sub: string | null;
  /** The member of the SET's `events` claim for `type`. */
  event: Record<string, unknown>;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The CAEP / RISC event member for a signal (CAEP 1.0 §3, RISC 1.0 §2). */
export function eventOf(
  signal: AccountSignal,
  initiating: InitiatingEntity,
): { type: string; event: Record<string, unknown> } {
  const common = { event_timestamp: nowSeconds(), initiating_entity: initiating };
  switch (signal.type) {
    case 'credential-change':
      return {
        type: EVENT_TYPES.credentialChange,
        event: {
          ...common,
          credential_type: CREDENTIAL_TYPES[signal.credential],
          change_type: signal.change,
          reason_admin: { en: CREDENTIAL_CHANGE_REASONS[signal.credential][signal.change] },
        },
      };
    case 'session-revoked':
      return {
        type: EVENT_TYPES.sessionRevoked,
        event: { ...common, reason_admin: { en: signal.reason } },
      };
    case 'account-disabled':
      return { type: EVENT_TYPES.accountDisabled, event: {} };
    case 'account-enabled':
      return { type: EVENT_TYPES.accountEnabled, event: {} };
    case 'account-purged':
      return { type: EVENT_TYPES.accountPurged, event: {} };
    case 'credential-compromise':
      return {
        type: EVENT_TYPES.credentialCompromise,
        event: {
          ...common,
          credential_type: CREDENTIAL_TYPES[signal.credential],
          ...(signal.reason && { reason_admin: { en: signal.reason } }),
        },
      };
  }
}

/**
 * The stream's owner may receive signals now: allowed, not disabled (a deleted owner's streams
 * are gone). An Account Admin who turns `receive_signals` off stops the account's streams at once;
 * turned on again, they carry what happens from then on.
 */
export function ownerMayReceive(q: Knex | Knex.Transaction) {
  return q('service_accounts as owner')
    .whereRaw('owner.sub = s.owner_sub')
    .where('owner.receive_signals', true)
    .whereNull('owner.disabled_at')
    .select(q.raw('1'));
}

/** The streams of `realm` that take an event of `type` about `sub`, locked in id order. */
function streamsFor(
  trx: Knex.Transaction,
  realm: string,
  type: string,
  sub: string,
): Promise<{ id: string; queued: number; backlog_limit: number }[]> {
  return trx('ssf_streams as s')
    .where('s.realm', realm)
    .whereNot('s.status', 'disabled')
    .whereExists(ownerMayReceive(trx))
    .whereRaw('jsonb_exists(s.events_requested, ?)', [type])
    .whereRaw(
      `coalesce(
         (select x.mode from ssf_stream_subjects x where x.stream_id = s.id and x.sub = ?),
         case when exists (select 1 from ssf_stream_subjects x where x.stream_id = s.id and x.mode = 'added')
           then 'removed' else 'added' end
       ) = 'added'`,
      [sub],
    )
    .orderBy('s.id')
    .forUpdate()
    .select('s.id', 's.queued', 's.backlog_limit');
}

/** Queues `event` on one locked stream, or counts it dropped when the backlog is full. */
async function enqueue(
  trx: Knex.Transaction,
  stream: { id: string; queued: number; backlog_limit: number },
  event: QueuedEvent,
): Promise<void> {
  if (stream.queued >= stream.backlog_limit) {
    await trx('ssf_streams').where({ id: stream.id }).increment('dropped_events', 1);
    return;
  }
  await trx('ssf_stream_events').insert({
    stream_id: stream.id,
    jti: randomUUID(),
    event_type: event.type,
    sub: event.sub,
    event: JSON.stringify(event.event),
  });
  await trx('ssf_streams').where({ id: stream.id }).increment('queued', 1);
  stream.queued += 1;
  await trx.raw('select pg_notify(?, ?)', [SIGNAL_CHANNEL, stream.id]);
}

/**
 * Queues the events of a change of the service account `sub` of `realm`, in order, inside the
 * transaction `trx` that makes the change. Costs one query when no stream of the realm wants
 * them.
 */
export async function recordSignals(
  trx: Knex.Transaction,
  realm: string,
  sub: string,
  signals: readonly AccountSignal[],
  initiating: InitiatingEntity = 'admin',
  credentials: readonly string[] = [],
): Promise<void> {
  for (const signal of signals) {
    for (const { type, event } of namingCredentials(eventOf(signal, initiating), credentials))
      for (const stream of await streamsFor(trx, realm, type, sub))
        await enqueue(trx, stream, { type, sub, event });
  }
}

/**
 * A credential event names the credential it is about (`credential_id`, the value a token's
 * `cred` claim carries: decision 0035), one event per credential; other events are unchanged.
 */
function namingCredentials(
  made: { type: string; event: Record<string, unknown> },
  credentials: readonly string[],
): Array<{ type: string; event: Record<string, unknown> }> {
  const aboutCredential =
    made.type === EVENT_TYPES.credentialChange || made.type === EVENT_TYPES.credentialCompromise;
  if (!aboutCredential || credentials.length === 0) return [made];
  return credentials.map((credential) => ({
    type: made.type,
    event: { ...made.event, credential_id: credential },
  }));
}

/**
 * RISC `credential-compromise` for a leaked credential, for the code that revokes it: call it
 * with the transaction that removes or replaces the credential (`changeAccount`'s `apply`), so
 * the event exists exactly when the revocation committed.
 */
export function recordCredentialCompromise(
  trx: Knex.Transaction,
  realm: string,
  sub: string,
  credential: AccountCredential = 'secret',
  reason = 'The credential was reported leaked and has been revoked',
): Promise<void> {
  return recordSignals(
    trx,
    realm,
    sub,
    [{ type: 'credential-compromise', credential, reason }],
    'system',
  );
}

/** The SSF verification event (SSF 1.0 §8.1.4), on the locked stream `id`; its subject is the stream. */
export async function recordVerification(
  trx: Knex.Transaction,
  stream: { id: string; queued: number; backlog_limit: number },
  state: string | undefined,
): Promise<void> {
  await enqueue(trx, stream, {
    type: EVENT_TYPES.verification,
    sub: null,
    event: state === undefined ? {} : { state },
  });
}
