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
 *
 * An event's way, step by step:
 *  0. written: signal-outbox.ts queues it in the transaction of the change it reports;
 *  1. wake-up: `onStream` (signal-notifications.ts hears the commit), `onResume`, the sweep;
 *     a poll stream's long polls answer (signal-poll-waiters.ts);
 *  2. claim: `#claim` leases the push streams due, each tenant up to its free lanes;
 *  3. round: signed, pushed, removed, one event after another (signal-delivery-round.ts);
 *  4. release: the lease ends, with a back-off after a failure (signal-delivery-round.ts).
 */
import type { Logger } from '@plant/shared/logging';
import type { Registry } from 'prom-client';
import type { IssuerFetchPolicy } from '../client-auth/index.js';
import type { KeyEncryption } from '../signing-keys/index.js';
import type { SecurityEventTokenSigner } from './security-event-tokens.js';
import { deliverRound, leaseSeconds, type RoundDeps } from './signal-delivery-round.js';
import { deliveryMetrics } from './signal-delivery-metrics.js';
import { PollWaiters } from './signal-poll-waiters.js';
import type { ClaimedStream, SignalStreamRepository } from './signal-stream-repository.js';

/** Sweep period: the latest a back-off's end or a missed notification is noticed. */
const SWEEP_MS = 1000;

export interface SignalDeliveryDeps {
  streams: SignalStreamRepository;
  signer: SecurityEventTokenSigner;
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
  readonly #waiters: PollWaiters;
  #sweep: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #round: RoundDeps;

  constructor(private readonly deps: SignalDeliveryDeps) {
    const pushed = deliveryMetrics(deps.streams, deps.metrics);
    this.#waiters = new PollWaiters(deps.maxWaiters);
    const { streams, signer, encryption, policy, logger } = deps;
    this.#round = {
      ...{ streams, signer, encryption, policy, logger, pushed },
      leaseSeconds: leaseSeconds(policy.timeoutMs),
      stopped: () => this.#stopped,
    };
  }

  start(): void {
    this.#sweep = setInterval(() => this.#claim(), SWEEP_MS);
    this.#sweep.unref();
  }

  /** Step 1: a stream got events (a notification): wake its long polls, and push if it is a push stream. */
  onStream(id: string): void {
    this.#waiters.wake(id);
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
    if (this.#stopped) return Promise.resolve();
    return this.#waiters.waitFor(streamId, ms, signal);
  }

  /** Push streams in flight on this replica, and per tenant (a copy; tests read the bounds). */
  get inFlight(): { streams: number; lanes: Map<string, number> } {
    return { streams: this.#inFlight.size, lanes: new Map(this.#lanes) };
  }

  /** Long polls waiting on this replica (tests read the bound). */
  get waiting(): number {
    return this.#waiters.waiting;
  }

  /**
   * Step 2: leases what is due, each tenant up to its free lanes. One claim at a time: the lanes
   * it fills are counted before the next one reads them, so racing wake-ups never exceed the bound.
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
      .claimPush(this.#round.leaseSeconds, this.deps.perTenant, this.#lanes)
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

  /** Steps 3 and 4 in the stream's tenant lane. */
  #start(stream: ClaimedStream): void {
    this.#inFlight.set(stream.id, stream.realm);
    this.#lanes.set(stream.realm, (this.#lanes.get(stream.realm) ?? 0) + 1);
    void deliverRound(this.#round, stream).then(() => {
      this.#inFlight.delete(stream.id);
      const left = (this.#lanes.get(stream.realm) ?? 1) - 1;
      if (left > 0) this.#lanes.set(stream.realm, left);
      else this.#lanes.delete(stream.realm);
      // A lane is free: the tenant's next due stream, events that came during the round, or
      // the rest of a round cut short.
      this.#claim();
    });
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#sweep);
    this.#waiters.wakeAll();
  }
}
