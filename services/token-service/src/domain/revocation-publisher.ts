import { REVOCATION_CHANNEL, withTimeout, type Logger, type RevocationEntry } from '@plant/shared';
import type { Redis } from 'ioredis';

const PUBLISH_TIMEOUT_MS = 1000;

/**
 * Publishes `{tenant, sub, version, deleted}` after commit. Local listeners (this
 * replica's client cache) hear it synchronously, so this replica never serves a stale
 * secret even for the instant the Redis round trip takes.
 */
export class RevocationPublisher {
  readonly #listeners: Array<(entry: RevocationEntry) => void> = [];

  constructor(
    private readonly redis: Redis | undefined,
    private readonly logger: Logger,
  ) {}

  onLocal(listener: (entry: RevocationEntry) => void): void {
    this.#listeners.push(listener);
  }

  async publish(entry: RevocationEntry): Promise<void> {
    for (const listener of this.#listeners) listener(entry);
    if (!this.redis) return;
    try {
      await withTimeout(this.redis.publish(REVOCATION_CHANNEL, JSON.stringify(entry)), PUBLISH_TIMEOUT_MS, 'publish');
    } catch (err) {
      // The change is committed; resource servers re-sync from the snapshot (REVOCATION_RESYNC_MS).
      this.logger.error({ err: { message: (err as Error).message }, tenant: entry.tenant, sub: entry.sub }, 'revocation publish failed');
    }
  }
}
