import type { Logger } from '@plant/shared/logging';
import type { CredentialUsageRepository, CredentialUse } from './credential-usage-repository.js';

const FLUSH_MS = 5_000;
const MIN_INTERVAL_MS = 60_000;
const MAX_REMEMBERED = 50_000;

const keyOf = (use: CredentialUse) => `${use.sub}\u0000${use.kind}\u0000${use.id}`;

/**
 * last_used_at of accounts and of the credential that issued each token (the secret, a key, a
 * trust), off the request path: the token endpoint only notes the use; a timer writes at most
 * once a minute per credential (the SQL re-checks the minute, so replicas together also write
 * at most once a minute). Bound: the credentials used within the last minute, past
 * MAX_REMEMBERED the older ones go.
 */
export class UsageRecorder {
  readonly #pending = new Map<string, CredentialUse>();
  readonly #lastWritten = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly usage: CredentialUsageRepository,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), FLUSH_MS);
    this.#timer.unref();
  }

  record(use: CredentialUse): void {
    const key = keyOf(use);
    const last = this.#lastWritten.get(key);
    if (last !== undefined && Date.now() - last < MIN_INTERVAL_MS) return;
    this.#pending.set(key, use);
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const uses = [...this.#pending.values()];
    const now = Date.now();
    for (const key of this.#pending.keys()) this.#lastWritten.set(key, now);
    this.#pending.clear();
    if (this.#lastWritten.size > MAX_REMEMBERED) {
      for (const [key, at] of this.#lastWritten)
        if (now - at >= MIN_INTERVAL_MS) this.#lastWritten.delete(key);
    }
    try {
      await this.usage.touchLastUsed(uses);
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'last_used_at update failed');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}
