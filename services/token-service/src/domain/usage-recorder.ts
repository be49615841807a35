import type { Logger } from '@plant/shared';
import type { ClientCredentialRepository } from '../data-access/client-credential-repository.js';

const FLUSH_MS = 5_000;
const MIN_INTERVAL_MS = 60_000;
const MAX_REMEMBERED = 50_000;

/**
 * last_used_at, off the request path: the token endpoint only notes the client_id; a
 * timer writes at most once a minute per account (the SQL re-checks the minute, so
 * replicas together also write at most once a minute).
 */
export class UsageRecorder {
  readonly #pending = new Set<string>();
  readonly #lastWritten = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly credentials: Pick<ClientCredentialRepository, 'touchLastUsed'>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.#timer ??= setInterval(() => void this.flush(), FLUSH_MS);
    this.#timer.unref();
  }

  record(clientId: string): void {
    const last = this.#lastWritten.get(clientId);
    if (last !== undefined && Date.now() - last < MIN_INTERVAL_MS) return;
    this.#pending.add(clientId);
  }

  async flush(): Promise<void> {
    if (this.#pending.size === 0) return;
    const subs = [...this.#pending];
    this.#pending.clear();
    const now = Date.now();
    for (const sub of subs) this.#lastWritten.set(sub, now);
    if (this.#lastWritten.size > MAX_REMEMBERED) {
      for (const [sub, at] of this.#lastWritten) if (now - at >= MIN_INTERVAL_MS) this.#lastWritten.delete(sub);
    }
    try {
      await this.credentials.touchLastUsed(subs);
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
