/**
 * Steps 3 and 4 of pushing a stream's events (signal-delivery.ts), on a stream this replica
 * leased: the round sends the events one at a time, oldest first — each signed, pushed, then
 * removed once the receiver took it (a 400 is RFC 8935's "this SET is rejected": removed and
 * logged, the next one goes) — until none is left, one fails or the round is over; then the
 * lease is released, with a back-off after a failure (the events stay queued).
 */
import type { Logger } from '@plant/shared/logging';
import type { Counter } from 'prom-client';
import type { IssuerFetchPolicy } from '../client-auth/index.js';
import type { KeyEncryption } from '../signing-keys/index.js';
import type { SecurityEventTokenSigner } from './security-event-tokens.js';
import { pushSecurityEvent } from './signal-push.js';
import type {
  ClaimedStream,
  QueuedEventRow,
  SignalStreamRepository,
} from './signal-stream-repository.js';

/**
 * A lease outlives a delivery round by far: a round stops sending once another push could end
 * past half the lease, so no two replicas ever hold one stream. A replica that died holding a
 * lease frees it this late (the stream waits that long, nothing is lost).
 */
export function leaseSeconds(pushTimeoutMs: number): number {
  return Math.ceil((4 * pushTimeoutMs) / 1000) + 10;
}
/** Events sent per lease before the stream is put back (others' turn; the lease renewed). */
const EVENTS_PER_ROUND = 100;
/** Events read per query within a round. */
const EVENTS_PER_READ = 10;
/** Back-off after failed attempts: 0.5 s doubling to at most 60 s. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 60_000;

export function backoffMs(attempts: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.min(attempts, 20), BACKOFF_MAX_MS);
}

/** How a round ended: a back-off to wait (a failure), the error to show. */
interface RoundOutcome {
  retryInMs?: number;
  error: string | null;
}

export interface RoundDeps {
  streams: SignalStreamRepository;
  signer: SecurityEventTokenSigner;
  encryption: KeyEncryption;
  /** The trusted-issuer address rules, with the push deadline. */
  policy: IssuerFetchPolicy;
  logger: Logger;
  /** `ssf_push_attempts_total`. */
  pushed: Counter<'outcome'>;
  /** The lease a claim takes, in seconds. */
  leaseSeconds: number;
  /** Delivery stopped (the process closes): the round sends nothing more. */
  stopped(): boolean;
}

/** One delivery round (step 3) and the lease's release (step 4). */
export async function deliverRound(deps: RoundDeps, stream: ClaimedStream): Promise<void> {
  let outcome: RoundOutcome = { error: null };
  try {
    outcome = await pushRound(deps, stream);
  } catch (err) {
    outcome = {
      retryInMs: backoffMs(stream.attempts),
      error: (err as Error).message,
    };
    deps.logger.warn(
      { stream: stream.id, err: { message: (err as Error).message } },
      'signal delivery failed',
    );
  }
  await releaseStream(deps, stream, outcome);
}

/** Step 4: the lease ends; `retryInMs` makes the next attempt wait. */
async function releaseStream(
  { streams, logger }: RoundDeps,
  stream: ClaimedStream,
  outcome: RoundOutcome,
): Promise<void> {
  await streams
    .release(stream.id, outcome)
    .catch((err: Error) =>
      logger.warn(
        { stream: stream.id, err: { message: err.message } },
        'could not release a signal stream',
      ),
    );
}

/** Step 3: the stream's events in order until none is left, one fails, or the round is over. */
async function pushRound(deps: RoundDeps, stream: ClaimedStream): Promise<RoundOutcome> {
  const authorization =
    stream.authorization_header_sealed === null
      ? undefined
      : deps.encryption.decrypt(stream.authorization_header_sealed, stream.id);
  let error: string | null = null;
  let sent = 0;
  const roundEnds = Date.now() + (deps.leaseSeconds * 1000) / 2 - deps.policy.timeoutMs;
  while (sent < EVENTS_PER_ROUND && !deps.stopped() && Date.now() < roundEnds) {
    const { events, more } = await deps.streams.oldest(stream.id, EVENTS_PER_READ);
    if (events.length === 0) return { error };
    let cut = false;
    for (const event of events) {
      if (Date.now() >= roundEnds) {
        cut = true;
        break;
      }
      const result = await pushEvent(deps, stream, event, authorization);
      if (result.kind === 'failed')
        return { retryInMs: backoffMs(stream.attempts), error: result.error };
      if (result.kind === 'rejected') error = result.error;
      await deps.streams.delivered(stream.id, [event.seq]);
      sent += 1;
    }
    // Everything there was is sent: the round's end claims again, for events that came meanwhile.
    if (!more && !cut) return { error };
  }
  return { error };
}

/** One event signed and pushed; a rejected one is logged (it is not sent again). */
async function pushEvent(
  { signer, policy, pushed, logger }: RoundDeps,
  stream: ClaimedStream,
  event: QueuedEventRow,
  authorization: string | undefined,
): Promise<{ kind: 'delivered' } | { kind: 'rejected' | 'failed'; error: string }> {
  const set = await signer.sign(stream.realm, stream.id, stream.owner_sub, event);
  const result = await pushSecurityEvent(stream.endpoint_url, set, authorization, policy);
  pushed.inc({ outcome: result.kind });
  if (result.kind !== 'rejected') return result;
  logger.warn(
    { stream: stream.id, jti: event.jti, error: result.error },
    'receiver rejected a SET; it is not sent again',
  );
  return { kind: 'rejected', error: `SET ${event.jti} rejected: ${result.error}` };
}
