/**
 * The subscription to the revocation channel on a dedicated Redis connection: connect,
 * subscribe on every `ready`, PING to notice a connection that died silently, and say when
 * the subscription is confirmed and when it is lost. It only makes changes arrive sooner;
 * whether the map is complete is the sync's decision (revocation-sync.ts).
 */
import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from '../platform/logger.js';
import { createRedisClient, type RedisTarget } from '../platform/redis-client.js';
import { REVOCATION_CHANNEL } from '../platform/revocation-types.js';
import { withTimeout } from '../platform/with-timeout.js';

/**
 * Where the subscription stands. A new state object is made on every change, so a SUBSCRIBE
 * confirmation or a PING answer checks by identity that it still belongs to the state it was
 * sent in: one begun on an older connection can never make us subscribed or lost.
 */
export type SubscriptionState =
  | { readonly kind: 'idle' } // before start
  | { readonly kind: 'connecting' } // started, the connection not ready yet
  | { readonly kind: 'subscribing' } // connection ready, SUBSCRIBE sent
  | { readonly kind: 'subscribed' } // confirmed on the current connection: events reach us
  | { readonly kind: 'lost'; readonly reason: string } // the connection closed or stopped answering; ioredis reconnects
  | { readonly kind: 'stopped' };

export interface RevocationSubscriptionOptions {
  /** REDIS_URL, or a Sentinel-managed master (`redisTargetOf(config)`). */
  redis: RedisTarget | string;
  /** PING period on the subscriber connection; a PING unanswered for `max(1 s, heartbeatMs)` counts as a lost connection. */
  heartbeatMs: number;
  logger: Logger;
  /** The subscription is confirmed on a new connection; events published from now on reach `onMessage`. */
  onSubscribed(): void;
  /** The subscription is gone: events may be missed until `onSubscribed` again. */
  onLost(): void;
  /** A message on the revocation channel, as published. */
  onMessage(message: string): void;
}

const MIN_PING_TIMEOUT_MS = 1000;

export class RevocationSubscription {
  #state: SubscriptionState = { kind: 'idle' };
  #redis: Redis | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #pingInFlight = false;
  /** ioredis repeats the same error on every retry; one line per distinct failure is enough. */
  #lastError = '';
  /** `settled` callers, woken when subscribed, on a connection error, or on stop. */
  #waiters: Array<() => void> = [];

  constructor(private readonly options: RevocationSubscriptionOptions) {}

  get subscribed(): boolean {
    return this.#state.kind === 'subscribed';
  }

  /** The current confirmed subscription (compare by identity), or undefined while there is none. */
  current(): SubscriptionState | undefined {
    return this.#state.kind === 'subscribed' ? this.#state : undefined;
  }

  start(): void {
    if (this.#state.kind !== 'idle') return;
    this.#state = { kind: 'connecting' };
    this.#redis = this.#connect();
    this.#heartbeat = setInterval(() => this.#ping(), this.options.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** Resolves once subscribed, on a connection error, on stop, or after `waitMs`, whichever comes first. */
  async settled(waitMs: number): Promise<void> {
    if (this.#state.kind === 'subscribed' || this.#state.kind === 'stopped') return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#waiters.push(resolve);
      timer = setTimeout(resolve, waitMs);
    });
    clearTimeout(timer);
  }

  stop(): void {
    if (this.#state.kind === 'stopped') return;
    this.#state = { kind: 'stopped' };
    clearInterval(this.#heartbeat);
    this.#wake();
    this.#redis?.disconnect();
  }

  #connect(): Redis {
    const redisOptions: RedisOptions = {
      lazyConnect: true,
      connectionName: 'plantstore-revocation-subscriber',
      // We subscribe ourselves on every 'ready' and track the moment it is confirmed; ioredis'
      // automatic resubscription would give no such moment.
      autoResubscribe: false,
      autoResendUnfulfilledCommands: false,
      // Commands fail at once while disconnected rather than queueing (the PING must not wait).
      enableOfflineQueue: false,
      maxRetriesPerRequest: null,
      connectTimeout: 2000,
      keepAlive: 5000,
      retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 5), 1000),
    };
    const redis = createRedisClient(this.options.redis, redisOptions);
    redis.on('ready', () => this.#subscribe(redis));
    redis.on('message', (channel: string, message: string) => {
      if (channel === REVOCATION_CHANNEL) this.options.onMessage(message);
    });
    redis.on('error', (err: Error) => this.#onError(err));
    redis.on('close', () => this.#lose('close'));
    redis.on('reconnecting', () => this.#lose('reconnecting'));
    redis.on('end', () => this.#lose('end'));
    redis.connect().catch(() => {
      // Reported through 'error'; ioredis keeps reconnecting by retryStrategy.
    });
    return redis;
  }

  #subscribe(redis: Redis): void {
    if (this.#state.kind === 'stopped') return;
    const subscribing: SubscriptionState = { kind: 'subscribing' };
    this.#state = subscribing;
    this.#lastError = '';
    redis.subscribe(REVOCATION_CHANNEL).then(
      () => {
        if (this.#state !== subscribing) return;
        this.#state = { kind: 'subscribed' };
        this.options.logger.info(
          { channel: REVOCATION_CHANNEL },
          'revocation subscription active; re-syncing',
        );
        this.#wake();
        this.options.onSubscribed();
      },
      (err: unknown) => {
        if (this.#state !== subscribing) return;
        this.options.logger.warn(
          { err: { message: (err as Error).message } },
          'revocation subscribe failed; reconnecting',
        );
        redis.disconnect(true);
      },
    );
  }

  #lose(reason: string): void {
    if (this.#state.kind === 'stopped') return;
    const wasSubscribed = this.#state.kind === 'subscribed';
    this.#state = { kind: 'lost', reason };
    if (wasSubscribed)
      this.options.logger.warn(
        { reason },
        'revocation subscription lost; checks fall back to token service lookups',
      );
    this.options.onLost();
  }

  #onError(err: Error): void {
    if (err.message === this.#lastError) return;
    this.#lastError = err.message;
    this.options.logger.warn(
      { err: { message: err.message } },
      'revocation subscriber connection error',
    );
    this.#wake();
  }

  /** A connection that died without a FIN (network partition) is only noticed by a command that never answers. */
  #ping(): void {
    const redis = this.#redis;
    const sentIn = this.#state;
    if (redis === undefined || sentIn.kind !== 'subscribed' || this.#pingInFlight) return;
    this.#pingInFlight = true;
    withTimeout(redis.ping(), Math.max(MIN_PING_TIMEOUT_MS, this.options.heartbeatMs), 'PING')
      .catch((err: unknown) => {
        if (this.#state !== sentIn) return;
        this.options.logger.warn(
          { err: { message: (err as Error).message } },
          'revocation subscriber unresponsive; reconnecting',
        );
        this.#lose('heartbeat');
        redis.disconnect(true);
      })
      .finally(() => {
        this.#pingInFlight = false;
      });
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
