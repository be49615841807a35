import type { Logger } from '@plant/shared/logging';
import {
  MAX_ENTRY_CREDENTIALS,
  REVOCATION_CHANNEL,
  revocationMessage,
  type RevocationEntry,
} from '@plant/shared/token-service-client';
import { inProducerSpan } from '@plant/shared/tracing';
import { withTimeout } from '@plant/shared/util';
import type { Redis } from 'ioredis';

const PUBLISH_TIMEOUT_MS = 1000;
/** Republish delays: from the first, doubling up to the last, while Redis keeps refusing. */
const REPUBLISH_FIRST_MS = 100;
export const REPUBLISH_MAX_MS = 1000;

const keyOf = (entry: RevocationEntry) => `${entry.tenant}\u0000${entry.sub}`;
/** What resource servers make of two entries of one principal, applied in any order (version = max, deleted = or, credentials = union). */
const join = (a: RevocationEntry, b: RevocationEntry): RevocationEntry => {
  const joined: RevocationEntry = {
    tenant: a.tenant,
    sub: a.sub,
    version: Math.max(a.version, b.version),
    deleted: a.deleted || b.deleted,
  };
  const credentials = new Set([...(a.credentials ?? []), ...(b.credentials ?? [])]);
  if (credentials.size > 0) joined.credentials = [...credentials];
  return joined;
};
const covers = (published: RevocationEntry, held: RevocationEntry) =>
  published.version >= held.version &&
  (published.deleted || !held.deleted) &&
  (held.credentials ?? []).every((c) => published.credentials?.includes(c) === true);

/**
 * The messages of `entry`: one, or, for a kept entry joined from many credential removals, one
 * per `MAX_ENTRY_CREDENTIALS` of them (more in one message is refused as malformed).
 */
function partsOf(entry: RevocationEntry): RevocationEntry[] {
  const { credentials } = entry;
  if (credentials === undefined || credentials.length <= MAX_ENTRY_CREDENTIALS) return [entry];
  const parts: RevocationEntry[] = [];
  for (let i = 0; i < credentials.length; i += MAX_ENTRY_CREDENTIALS)
    parts.push({ ...entry, credentials: credentials.slice(i, i + MAX_ENTRY_CREDENTIALS) });
  return parts;
}

/**
 * Publishes `{tenant, sub, version, deleted, credentials?}` after commit. Local listeners (this replica's
 * client cache) hear it synchronously, so this replica never serves a stale secret even for the
 * instant the Redis round trip takes.
 *
 * A publish that fails is not only logged: resource servers that stay subscribed would hear
 * nothing and accept the revoked token until their next re-sync. The entry is kept, joined with
 * any later change of the same principal, and published again (after 100 ms, doubling up to
 * `REPUBLISH_MAX_MS`, and at once when Redis is ready again or another publish goes through)
 * until Redis takes it.
 *
 * A message carries its publication time and, with tracing on, the W3C trace context of a
 * `revocation publish` span in the change's trace: each resource server's `revocation apply`
 * span joins that trace, and its `revocation_event_delay_seconds` measures the way there. A
 * republished entry (joined from several changes) carries the time only. A republished entry is what a re-sync would have told the resource
 * servers about that principal. The resource servers' periodic re-sync (Postgres, through the
 * internal API) still bounds the case this cannot: the process dying with entries kept.
 */
export class RevocationPublisher {
  readonly #listeners: Array<(entry: RevocationEntry) => void> = [];
  /** Entries Redis has not taken yet, one per principal: the bound is the principals changed while publishing failed. */
  readonly #pending = new Map<string, RevocationEntry>();
  #timer: NodeJS.Timeout | undefined;
  #delayMs = REPUBLISH_FIRST_MS;
  #republishing = false;
  #stopped = false;
  /** One log line per distinct republish failure, not one per retry. */
  #lastError = '';

  constructor(
    private readonly redis: Redis | undefined,
    private readonly logger: Logger,
  ) {
    redis?.on('ready', () => this.#republishSoon(0));
  }

  /** Principals whose latest change Redis has not taken yet. */
  get pending(): number {
    return this.#pending.size;
  }

  onLocal(listener: (entry: RevocationEntry) => void): void {
    this.#listeners.push(listener);
  }

  async publish(entry: RevocationEntry): Promise<void> {
    for (const listener of this.#listeners) listener(entry);
    if (!this.redis) return;
    const failure = await inProducerSpan(
      'revocation publish',
      {
        'messaging.system': 'redis',
        'messaging.destination.name': REVOCATION_CHANNEL,
        'messaging.operation.type': 'send',
      },
      (carried) => this.#send(entry, carried),
    );
    if (failure === undefined) {
      this.#taken(entry);
      if (this.#pending.size > 0) this.#republishSoon(0);
      return;
    }
    this.logger.error(
      { err: { message: failure.message }, tenant: entry.tenant, sub: entry.sub },
      'revocation publish failed; kept to publish again',
    );
    const key = keyOf(entry);
    const held = this.#pending.get(key);
    this.#pending.set(key, held === undefined ? entry : join(held, entry));
    this.#republishSoon(this.#delayMs);
  }

  /** Stops republishing (the process is closing; resource servers' re-sync covers what is left). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The error, or undefined when Redis took the entry. */
  async #send(
    entry: RevocationEntry,
    trace: { traceparent?: string; tracestate?: string } = {},
  ): Promise<Error | undefined> {
    try {
      for (const part of partsOf(entry))
        await withTimeout(
          this.redis!.publish(
            REVOCATION_CHANNEL,
            revocationMessage(part, { ...trace, publishedMs: Date.now() }),
          ),
          PUBLISH_TIMEOUT_MS,
          'publish',
        );
      return undefined;
    } catch (err) {
      return err as Error;
    }
  }

  /** Redis took `entry`: a kept entry of the same principal that it covers is done. */
  #taken(entry: RevocationEntry): void {
    const key = keyOf(entry);
    const held = this.#pending.get(key);
    if (held !== undefined && covers(entry, held)) this.#pending.delete(key);
  }

  #republishSoon(delayMs: number): void {
    if (this.#stopped || this.#republishing || this.#pending.size === 0) return;
    if (this.#timer !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.#timer);
    }
    this.#timer = setTimeout(() => void this.#republish(), delayMs);
    this.#timer.unref();
  }

  async #republish(): Promise<void> {
    this.#timer = undefined;
    this.#republishing = true;
    const batch = [...this.#pending.values()];
    const failures = await Promise.all(batch.map((entry) => this.#send(entry)));
    this.#republishing = false;
    batch.forEach((entry, i) => {
      if (failures[i] === undefined) this.#taken(entry);
    });
    const failure = failures.find((err) => err !== undefined);
    if (failure === undefined && this.#pending.size === 0) {
      this.logger.info({ republished: batch.length }, 'revocation events republished');
      this.#delayMs = REPUBLISH_FIRST_MS;
      this.#lastError = '';
      return;
    }
    if (failure !== undefined && failure.message !== this.#lastError)
      this.logger.warn(
        { err: { message: failure.message }, pending: this.#pending.size },
        'revocation republish failed; retrying',
      );
    this.#lastError = failure?.message ?? '';
    this.#delayMs =
      failure === undefined ? REPUBLISH_FIRST_MS : Math.min(this.#delayMs * 2, REPUBLISH_MAX_MS);
    this.#republishSoon(this.#delayMs);
  }
}
