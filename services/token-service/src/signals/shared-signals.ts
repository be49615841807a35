/**
 * Each realm is a Shared Signals transmitter (OpenID SSF 1.0, CAEP and RISC events, the CAEP
 * interoperability profile). A receiver is one of the realm's own service accounts that an
 * Account Admin allowed to receive signals (`receive_signals`); it authenticates with an access
 * token of the realm carrying `ssf.manage` (configuring streams) or `ssf.read` (reading them,
 * their status, polling). A stream belongs to the account that created it: every other caller,
 * of this realm or another, finds no such stream (404, nothing told). Events are queued by the
 * outbox (signal-outbox/signal-outbox.ts) in the transaction of the change they report, and
 * delivered by signal-delivery.ts (push) or polled here.
 */
import { randomBytes } from 'node:crypto';
import { AppError, BadRequest, NotFound } from '@plant/shared/api';
import type { Principal } from '@plant/resource-auth';
import { InsufficientScope, InvalidToken, MissingToken } from '@plant/resource-auth';
import type { IssuerFetchPolicy } from '../client-auth/index.js';
import { SUPPORTED_EVENT_TYPES } from '../signal-outbox/index.js';
import { pushUrlProblem } from './signal-push.js';
import type {
  SignalStreamRepository,
  StreamKey,
  StreamRow,
  StreamSettings,
  StreamStatus,
} from './signal-stream-repository.js';
import type { TokenInspector } from '../grants/index.js';
import type { KeyEncryption } from '../signing-keys/index.js';
import { issuerOf, realmPath } from '../realms/index.js';
import {
  BacklogFull,
  StreamLimitReached,
  StreamNotFound,
  SubjectLimitReached,
  VerificationTooSoon,
} from '../platform/index.js';
import type { SecurityEventTokenSigner } from './security-event-tokens.js';
import type { SignalDelivery } from './signal-delivery.js';
import {
  type CreateStreamSchema,
  POLL_METHOD,
  type PollRequestSchema,
  PUSH_METHOD,
  STREAM_BOUNDS,
} from './signal-validators.js';
import type { z } from 'zod';

/** `WWW-Authenticate: Bearer realm="ssf"`: the protection space, not a tenant. */
const AUTH_REALM = 'ssf';
/** The longest bearer value worth verifying: longer is nothing we minted. */
const MAX_TOKEN_LENGTH = 8192;

export interface SharedSignalsContext {
  streams: SignalStreamRepository;
  inspector: TokenInspector;
  encryption: KeyEncryption;
  signer: SecurityEventTokenSigner;
  delivery: SignalDelivery;
  realmExists(tenant: string): Promise<boolean>;
  authUrl: string;
  /** Push URLs follow the trusted-issuer address rules (FEDERATION_ALLOW_* switches). */
  pushPolicy: Pick<IssuerFetchPolicy, 'allowHttp' | 'allowPrivate'>;
  limits: {
    backlog: number;
    streamsPerTenant: number;
    pollWaitSeconds: number;
    minVerificationIntervalSeconds: number;
  };
}

/** The transmitter's endpoints under the realm's issuer. */
export function signalEndpoints(authUrl: string, tenant: string) {
  const base = `${authUrl}${realmPath(tenant)}/ssf`;
  return {
    configuration: `${base}/streams`,
    status: `${base}/streams/status`,
    addSubject: `${base}/streams/subjects/add`,
    removeSubject: `${base}/streams/subjects/remove`,
    verification: `${base}/streams/verify`,
    poll: (streamId: string) => `${base}/streams/poll/${streamId}`,
  };
}

/** SSF 1.0 §7.1 transmitter configuration metadata, as the CAEP interoperability profile requires it. */
export async function transmitterConfiguration(
  ctx: Pick<SharedSignalsContext, 'realmExists' | 'authUrl' | 'limits'>,
  tenant: string,
): Promise<Record<string, unknown>> {
  if (!(await ctx.realmExists(tenant))) throw new NotFound('Realm not found');
  const issuer = issuerOf(ctx.authUrl, tenant);
  const endpoints = signalEndpoints(ctx.authUrl, tenant);
  return {
    spec_version: '1_0',
    issuer,
    jwks_uri: `${issuer}/protocol/openid-connect/certs`,
    delivery_methods_supported: [PUSH_METHOD, POLL_METHOD],
    configuration_endpoint: endpoints.configuration,
    status_endpoint: endpoints.status,
    add_subject_endpoint: endpoints.addSubject,
    remove_subject_endpoint: endpoints.removeSubject,
    verification_endpoint: endpoints.verification,
    critical_subject_members: ['iss', 'sub'],
    authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }],
    default_subjects: 'ALL',
  };
}

/** Who calls: the stream owner's identity within the realm. */
export interface Receiver {
  tenant: string;
  sub: string;
  /** `ssf.manage`: may change streams. */
  manage: boolean;
}

/**
 * The caller from its bearer token: a live token of this realm (the checks a resource server
 * makes, revocation included), of a service account allowed to receive signals now, with the
 * scope the endpoint needs. DPoP-bound tokens are refused here (no proof is checked on these
 * endpoints), as a resource server without DPoP support must.
 */
export async function authenticateReceiver(
  ctx: Pick<SharedSignalsContext, 'inspector' | 'streams'>,
  tenant: string,
  authorization: string | undefined,
  need: 'manage' | 'read',
): Promise<Receiver> {
  if (authorization === undefined || authorization === '') throw new MissingToken(AUTH_REALM);
  const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(authorization);
  if (match === null || match[1]!.length > MAX_TOKEN_LENGTH)
    throw new InvalidToken(AUTH_REALM, 'The Authorization header must be a Bearer access token');
  let principal: Principal;
  try {
    principal = await ctx.inspector.inspect(match[1]!);
  } catch (err) {
    if (err instanceof AppError && err.status === 401)
      throw new InvalidToken(AUTH_REALM, 'The access token is not valid');
    throw err;
  }
  if (principal.tenant !== tenant)
    throw new InvalidToken(AUTH_REALM, 'The access token is not of this realm');
  if (principal.jkt !== undefined)
    throw new InvalidToken(AUTH_REALM, 'DPoP-bound tokens are not accepted here');
  const scopes = principal.scope.split(' ');
  const manage = scopes.includes('ssf.manage');
  if (!(need === 'manage' ? manage : manage || scopes.includes('ssf.read')))
    throw new InsufficientScope(
      AUTH_REALM,
      need === 'manage' ? 'This needs scope ssf.manage' : 'This needs scope ssf.read or ssf.manage',
    );
  if (
    principal.principalType !== 'service_account' ||
    !(await ctx.streams.isReceiver(tenant, principal.sub))
  )
    throw new InsufficientScope(AUTH_REALM, 'This service account may not receive signals');
  return { tenant, sub: principal.sub, manage };
}

const keyOf = (receiver: Receiver, id: string): StreamKey => ({
  realm: receiver.tenant,
  owner: receiver.sub,
  id,
});

/** SSF 1.0 §8.1.1 stream configuration; the push Authorization header is never shown back. */
export function streamView(authUrl: string, row: StreamRow, minVerification: number) {
  const requested = row.events_requested;
  const poll = row.delivery_method === 'poll';
  return {
    stream_id: row.id,
    iss: issuerOf(authUrl, row.realm),
    aud: row.owner_sub,
    events_supported: SUPPORTED_EVENT_TYPES,
    events_requested: requested,
    events_delivered: SUPPORTED_EVENT_TYPES.filter((type) => requested.includes(type)),
    delivery: {
      method: poll ? POLL_METHOD : PUSH_METHOD,
      endpoint_url: poll ? signalEndpoints(authUrl, row.realm).poll(row.id) : row.endpoint_url,
    },
    min_verification_interval: minVerification,
    ...(row.description !== null && { description: row.description }),
  };
}

type StreamInput = z.infer<typeof CreateStreamSchema>;

/** The stored settings of a receiver's delivery and events, the push URL checked. */
function settingsOf(
  ctx: Pick<SharedSignalsContext, 'pushPolicy' | 'encryption'>,
  streamId: string,
  input: Partial<StreamInput>,
): StreamSettings {
  const settings: StreamSettings = {};
  if (input.delivery !== undefined) {
    const push = input.delivery.method === PUSH_METHOD;
    settings.deliveryMethod = push ? 'push' : 'poll';
    if (push) {
      const url = input.delivery.endpoint_url;
      if (url === undefined) throw new BadRequest('delivery.endpoint_url is required for push');
      const problem = pushUrlProblem(url, ctx.pushPolicy);
      if (problem !== undefined) throw new BadRequest(`delivery.endpoint_url ${problem}`);
      settings.endpointUrl = url;
      const header = input.delivery.authorization_header;
      settings.authorizationHeaderSealed =
        header === undefined ? null : ctx.encryption.encrypt(header, streamId);
    } else {
      settings.endpointUrl = null;
      settings.authorizationHeaderSealed = null;
    }
  }
  if (input.events_requested !== undefined)
    settings.eventsRequested = [...new Set(input.events_requested)];
  if (input.description !== undefined) settings.description = input.description;
  return settings;
}

export async function createStream(
  ctx: SharedSignalsContext,
  receiver: Receiver,
  input: StreamInput,
) {
  const id = `ssf-${randomBytes(16).toString('hex')}`;
  const settings = settingsOf(ctx, id, input);
  const outcome = await ctx.streams.create(
    {
      id,
      realm: receiver.tenant,
      ownerSub: receiver.sub,
      deliveryMethod: settings.deliveryMethod!,
      endpointUrl: settings.endpointUrl ?? null,
      authorizationHeaderSealed: settings.authorizationHeaderSealed ?? null,
      // SSF: without events_requested the receiver asked for none; it can PATCH them in.
      eventsRequested: settings.eventsRequested ?? [],
      description: settings.description ?? null,
      backlogLimit: ctx.limits.backlog,
    },
    ctx.limits.streamsPerTenant,
  );
  if (outcome === 'limit-reached') throw new StreamLimitReached();
  return readStream(ctx, receiver, id);
}

export async function readStream(ctx: SharedSignalsContext, receiver: Receiver, id: string) {
  const row = await ctx.streams.find(keyOf(receiver, id));
  if (row === undefined) throw new StreamNotFound();
  return streamView(ctx.authUrl, row, ctx.limits.minVerificationIntervalSeconds);
}

export async function listStreams(ctx: SharedSignalsContext, receiver: Receiver) {
  const rows = await ctx.streams.list(receiver.tenant, receiver.sub);
  return rows.map((row) => streamView(ctx.authUrl, row, ctx.limits.minVerificationIntervalSeconds));
}

/** PATCH changes what is given; PUT (`replace`) sets every receiver member, absent ones to their defaults. */
export async function updateStream(
  ctx: SharedSignalsContext,
  receiver: Receiver,
  id: string,
  input: Partial<StreamInput>,
  replace: boolean,
) {
  const settings = settingsOf(ctx, id, input);
  if (replace) {
    settings.eventsRequested ??= [];
    settings.description ??= null;
  }
  const row = await ctx.streams.update(keyOf(receiver, id), settings);
  if (row === undefined) throw new StreamNotFound();
  return streamView(ctx.authUrl, row, ctx.limits.minVerificationIntervalSeconds);
}

export async function deleteStream(ctx: SharedSignalsContext, receiver: Receiver, id: string) {
  if (!(await ctx.streams.delete(keyOf(receiver, id)))) throw new StreamNotFound();
}

/**
 * SSF 1.0 §8.1.2 stream status, with what a receiver needs to see the backlog's state:
 * `queued_events`, `dropped_events` (events the full backlog refused; the reason says so while
 * any were dropped) and the last push error.
 */
function statusView(row: StreamRow) {
  const dropped = Number(row.dropped_events);
  const overflow =
    dropped > 0
      ? `${dropped} events were dropped: the stream's backlog of ${row.backlog_limit} was full`
      : undefined;
  const reason = [row.status_reason, overflow].filter(Boolean).join('; ');
  return {
    stream_id: row.id,
    status: row.status,
    ...(reason !== '' && { reason }),
    queued_events: row.queued,
    backlog_limit: row.backlog_limit,
    dropped_events: dropped,
    ...(row.last_error !== null && { last_delivery_error: row.last_error }),
  };
}

export async function readStatus(ctx: SharedSignalsContext, receiver: Receiver, id: string) {
  const row = await ctx.streams.find(keyOf(receiver, id));
  if (row === undefined) throw new StreamNotFound();
  return statusView(row);
}

export async function setStatus(
  ctx: SharedSignalsContext,
  receiver: Receiver,
  id: string,
  status: StreamStatus,
  reason: string | undefined,
) {
  const row = await ctx.streams.setStatus(keyOf(receiver, id), status, reason ?? null);
  if (row === undefined) throw new StreamNotFound();
  return statusView(row);
}

/**
 * Adding a subject limits the stream to its added subjects; removing one leaves it out (a
 * stream with none added carries every service account of the realm: `default_subjects` ALL).
 * A subject of another issuer is refused: it names no account of this realm.
 */
export async function setSubject(
  ctx: SharedSignalsContext,
  receiver: Receiver,
  id: string,
  subject: { iss: string; sub: string },
  mode: 'added' | 'removed',
) {
  if (subject.iss !== issuerOf(ctx.authUrl, receiver.tenant))
    throw new BadRequest("subject.iss must be this realm's issuer");
  const outcome = await ctx.streams.setSubject(
    keyOf(receiver, id),
    subject.sub,
    mode,
    STREAM_BOUNDS.subjectsPerStream,
  );
  if (outcome === undefined) throw new StreamNotFound();
  if (outcome === 'limit-reached') throw new SubjectLimitReached();
}

export async function requestVerification(
  ctx: SharedSignalsContext,
  receiver: Receiver,
  id: string,
  state: string | undefined,
) {
  const row = await ctx.streams.find(keyOf(receiver, id));
  if (row === undefined) throw new StreamNotFound();
  if (row.status === 'disabled') throw new BadRequest('The stream is disabled');
  const interval = ctx.limits.minVerificationIntervalSeconds;
  const outcome = await ctx.streams.verify(keyOf(receiver, id), state, interval);
  if (outcome === undefined) throw new StreamNotFound();
  if (outcome === 'too-soon')
    throw new VerificationTooSoon(undefined, {
      headers: { 'retry-after': String(Math.max(1, interval)) },
    });
  if (outcome === 'backlog-full') throw new BacklogFull();
}

type PollInput = z.infer<typeof PollRequestSchema>;

/** A poll that asks for nothing says how many it wants by `maxEvents`; absent, this many. */
const DEFAULT_POLL_EVENTS = 25;

/**
 * RFC 8936 poll: acknowledge (`ack`, `setErrs`: only this stream's events go), then answer the
 * oldest unacknowledged SETs, at most `maxEvents` (and at most STREAM_BOUNDS.pollEvents). With
 * none to answer and `returnImmediately` false, waits for one up to the poll wait. Events stay
 * queued until acknowledged: a lost answer loses nothing. A paused stream answers none.
 */
export async function pollStream(
  ctx: SharedSignalsContext,
  receiver: Receiver,
  id: string,
  input: PollInput,
  abort?: AbortSignal,
) {
  const row = await ctx.streams.find(keyOf(receiver, id));
  if (row === undefined) throw new StreamNotFound();
  if (row.delivery_method !== 'poll') throw new BadRequest('The stream is not a poll stream');
  const acks = [...(input.ack ?? []), ...Object.keys(input.setErrs ?? {})];
  await ctx.streams.acknowledge(id, acks);
  const max = Math.min(input.maxEvents ?? DEFAULT_POLL_EVENTS, STREAM_BOUNDS.pollEvents);
  if (max === 0 || row.status !== 'enabled') return { sets: {}, moreAvailable: false };
  let batch = await ctx.streams.oldest(id, max);
  if (batch.events.length === 0 && input.returnImmediately !== true) {
    await ctx.delivery.waitFor(id, ctx.limits.pollWaitSeconds * 1000, abort);
    batch = await ctx.streams.oldest(id, max);
  }
  const sets: Record<string, string> = {};
  for (const event of batch.events)
    sets[event.jti] = await ctx.signer.sign(receiver.tenant, id, receiver.sub, event);
  return { sets, moreAvailable: batch.more };
}
