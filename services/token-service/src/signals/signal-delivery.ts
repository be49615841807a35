/**
 * Delivery of queued security events. Push (RFC 8935): a replica leases a stream (`for update
 * skip locked`, a lease that lapses if the replica dies) and sends its events one at a time,
 * oldest first, removing each once the receiver took it: per-stream order holds, and however
 * many replicas run, one delivers a stream at a time. A receiver that does not answer, or
 * answers other than 2xx or 400, stops the stream's delivery with an exponential back-off; the
 * events stay queued (the backlog bound applies). A 400 is RFC 8935's "this SET is rejected":
 * retrying it cannot help, so it is removed, logged and the next one goes. Poll (RFC 8936)
 * is answered by the use case (shared-signals.ts); its long polls wait here, on the same wake-up.
 *
 * Fair across tenants: a replica's pushing is in lanes per tenant, at most `perTenant` streams of
 * one tenant at once, and nothing else is shared. A round waits on its receiver in its own
 * tenant's lane, so a tenant whose receivers are slow or failing delays only its own streams;
 * another tenant's stream is claimed at its wake-up, at most one claim query later. Claims are
 * made one at a time (a wake-up during a claim asks for one more afterwards), and each sees the
 * lanes as the previous one left them: the bound is exact however many streams fall due at
 * once. Within a tenant, the streams due longest go first (their rounds are bounded).
 *
 * Wake-ups: the outbox's `pg_notify` at commit (every replica hears it), the end of a round, and
 * a sweep every second for back-offs that ended, lapsed leases and notifications missed while
 * the LISTEN connection was down. So a crash between commit and delivery only delays: the event
 * is in Postgres, and whichever replica runs next delivers it.
 */
import type { Logger } from '@plant/shared/logging';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { IssuerFetchPolicy } from '../client-auth/index.js';
import { pushSecurityEvent } from './signal-push.js';
import type { ClaimedStream, SignalStreamRepository } from './signal-stream-repository.js';
import type { KeyEncryption } from '../signing-keys/index.js';
import type { SecurityEventSigner } from './security-event-tokens.js';

/** Sweep period: the latest a back-off's end or a missed notification is noticed. */
const SWEEP_MS = 1000;
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
/** Back-off after failed attempts: 0.5 s doubling to at most 60 s. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 60_000;

/** How a round ended: a back-off to wait (a failure), the error to show. */
interface RoundOutcome {
  retryInMs?: number;
  error: string | null;
}

export function backoffMs(attempts: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.min(attempts, 20), BACKOFF_MAX_MS);
}

export interface SignalDeliveryDeps {
  streams: SignalStreamRepository;
  signer: SecurityEventSigner;
  encryption: KeyEncryption;
  /** The trusted-issuer address rules, with the push deadline. */
  policy: IssuerFetchPolicy;
  maxWaiters: number;
  /** Streams of one tenant this replica pushes at once (its lane width). */
  perTenant: number;
  logger: Logger;
  metrics: Registry;
}

export class SignalDelivery {
  /**
   * Streams in flight and their tenant; `#lanes` counts them per tenant. Bounds: at most
   * `perTenant` streams per tenant, a tenant present only while one of its streams is in flight.
   */
  readonly #inFlight = new Map<string, string>();
  readonly #lanes = new Map<string, number>();
  /** A claim query is running; `#claimAgain`: a wake-up came meanwhile (one more claim after it). */
  #claiming = false;
  #claimAgain = false;
  /** Long polls waiting per stream; at most `maxWaiters` in total. */
  readonly #waiters = new Map<string, Set<() => void>>();
  #waiting = 0;
  #sweep: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #pushed: Counter<'outcome'>;

  constructor(private readonly deps: SignalDeliveryDeps) {
    this.#pushed = new Counter({
      name: 'ssf_push_attempts_total',
      help: 'Shared Signals SETs pushed to receivers, by outcome (delivered, rejected by the receiver, failed and kept for a retry)',
      labelNames: ['outcome'],
      registers: [deps.metrics],
    });
    const { streams } = deps;
    let totals: Promise<{ queued: number; dropped: number }> | undefined;
    // One query per scrape for both gauges, over every replica's streams.
    const read = () => {
      totals ??= streams.totals().finally(() => {
        totals = undefined;
      });
      return totals;
    };
    new Gauge({
      name: 'ssf_stream_events_queued',
      help: 'Shared Signals events waiting in streams (undelivered or unacknowledged), all streams',
      registers: [deps.metrics],
      async collect() {
        this.set((await read()).queued);
      },
    });
    new Gauge({
      name: 'ssf_stream_events_dropped',
      help: "Shared Signals events dropped because a stream's backlog was full, all streams (grows: alert on increase)",
      registers: [deps.metrics],
      async collect() {
        this.set((await read()).dropped);
      },
    });
  }

  start(): void {
    this.#sweep = setInterval(() => this.#claim(), SWEEP_MS);
    this.#sweep.unref();
  }

  /** A stream got events (a notification): wake its long polls, and push if it is a push stream. */
  onStream(id: string): void {
    const waiters = this.#waiters.get(id);
    if (waiters !== undefined) {
      this.#waiters.delete(id);
      for (const wake of waiters) wake();
    }
    this.#claim();
  }

  /** After the notifications connection (re)starts: whatever was missed meanwhile. */
  onResume(): void {
    this.#claim();
  }

  /**
   * Waits until the stream gets events or `ms` passes; at once when `maxWaiters` polls already
   * wait on this replica (the caller then answers with what there is: nothing).
   */
  waitFor(streamId: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#waiting >= this.deps.maxWaiters || this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.#waiters.get(streamId);
      if (set === undefined) {
        set = new Set();
        this.#waiters.set(streamId, set);
      }
      this.#waiting += 1;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        const current = this.#waiters.get(streamId);
        if (current?.delete(done) && current.size === 0) this.#waiters.delete(streamId);
        this.#waiting -= 1;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done);
      set.add(done);
    });
  }

  /** Push streams in flight on this replica, and per tenant (a copy; tests read the bounds). */
  get inFlight(): { streams: number; lanes: Map<string, number> } {
    return { streams: this.#inFlight.size, lanes: new Map(this.#lanes) };
  }

  /** Long polls waiting on this replica (tests read the bound). */
  get waiting(): number {
    return this.#waiting;
  }

  get #lease(): number {
    return leaseSeconds(this.deps.policy.timeoutMs);
  }

  /**
   * Leases what is due, each tenant up to its free lanes. One claim at a time: the lanes it
   * fills are counted before the next one reads them, so racing wake-ups never exceed the bound.
   */
  #claim(): void {
    if (this.#stopped) return;
    if (this.#claiming) {
      this.#claimAgain = true;
      return;
    }
    this.#claiming = true;
    this.#claimAgain = false;
    this.deps.streams
      .claimPush(this.#lease, this.deps.perTenant, this.#lanes)
      .then(
        (claimed) => {
          for (const stream of claimed) this.#start(stream);
        },
        (err: Error) =>
          this.deps.logger.warn(
            { err: { message: err.message } },
            'could not claim signal streams',
          ),
      )
      .finally(() => {
        this.#claiming = false;
        if (this.#claimAgain) this.#claim();
      });
  }

  #start(stream: ClaimedStream): void {
    this.#inFlight.set(stream.id, stream.realm);
    this.#lanes.set(stream.realm, (this.#lanes.get(stream.realm) ?? 0) + 1);
    void this.#deliver(stream).then(() => {
      this.#inFlight.delete(stream.id);
      const left = (this.#lanes.get(stream.realm) ?? 1) - 1;
      if (left > 0) this.#lanes.set(stream.realm, left);
      else this.#lanes.delete(stream.realm);
      // A lane is free: the tenant's next due stream, events that came during the round, or
      // the rest of a round cut short.
      this.#claim();
    });
  }

  /** One delivery round and the lease's release. */
  async #deliver(stream: ClaimedStream): Promise<void> {
    const { streams } = this.deps;
    let outcome: RoundOutcome = { error: null };
    try {
      outcome = await this.#round(stream);
    } catch (err) {
      outcome = {
        retryInMs: backoffMs(stream.attempts),
        error: (err as Error).message,
      };
      this.deps.logger.warn(
        { stream: stream.id, err: { message: (err as Error).message } },
        'signal delivery failed',
      );
    }
    await streams
      .release(stream.id, outcome)
      .catch((err: Error) =>
        this.deps.logger.warn(
          { stream: stream.id, err: { message: err.message } },
          'could not release a signal stream',
        ),
      );
  }

  /** Sends the stream's events in order until none is left, one fails, or the round is over. */
  async #round(stream: ClaimedStream): Promise<RoundOutcome> {
    const { streams, signer, encryption, policy } = this.deps;
    const authorization =
      stream.authorization_header_sealed === null
        ? undefined
        : encryption.decrypt(stream.authorization_header_sealed, stream.id);
    let error: string | null = null;
    let sent = 0;
    const roundEnds = Date.now() + (this.#lease * 1000) / 2 - policy.timeoutMs;
    while (sent < EVENTS_PER_ROUND && !this.#stopped && Date.now() < roundEnds) {
      const { events, more } = await streams.oldest(stream.id, 10);
      if (events.length === 0) return { error };
      let cut = false;
      for (const event of events) {
        if (Date.now() >= roundEnds) {
          cut = true;
          break;
        }
        const set = await signer.sign(stream.realm, stream.id, stream.owner_sub, event);
        const result = await pushSecurityEvent(stream.endpoint_url, set, authorization, policy);
        this.#pushed.inc({ outcome: result.kind });
        if (result.kind === 'failed')
          return { retryInMs: backoffMs(stream.attempts), error: result.error };
        if (result.kind === 'rejected') {
          error = `SET ${event.jti} rejected: ${result.error}`;
          this.deps.logger.warn(
            { stream: stream.id, jti: event.jti, error: result.error },
            'receiver rejected a SET; it is not sent again',
          );
        }
        await streams.delivered(stream.id, [event.seq]);
        sent += 1;
      }
      // Everything there was is sent: the round's end claims again, for events that came meanwhile.
      if (!more && !cut) return { error };
    }
    return { error };
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#sweep);
    for (const waiters of this.#waiters.values()) for (const wake of waiters) wake();
  }
}
