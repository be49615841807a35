import type { Logger } from '@plant/shared/logging';
import type { IdentityContext } from '../platform/index.js';
import { revocationHorizonSeconds } from '../revocation/index.js';

/** How often the feed is read: the longest a credential change whose event was lost stays cached here. */
export const FOLLOW_MS = 5_000;
/** After failing this long, the cache is emptied: changes may have been missed, and none can be read. */
const GIVE_UP_MS = 30_000;
const PAGE = 1000;

/**
 * The credential cache's own reader of the revocation change feed. Every credential change
 * (reset, delete, role, grants) bumps the principal's version, so it is in the feed; the
 * revocation events on Redis make this replica forget a changed account at once, and this
 * follower catches what an event missed, within `FOLLOW_MS`, for one query a period whatever
 * the number of accounts cached. So cached credentials need no short expiry of their own
 * (client-credential-repository.ts keeps them ten minutes). A position the feed cannot continue
 * (pruned past, or a restored database) forgets every account.
 */
export class CredentialChangeFollower {
  #position: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #lastRead = Date.now();
  #lastError = '';

  constructor(
    private readonly ctx: Pick<IdentityContext, 'revocationFeed' | 'clientCredentials'>,
    private readonly accessTokenTtl: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.#timer = setInterval(() => void this.follow(), FOLLOW_MS);
    this.#timer.unref();
    void this.follow();
  }

  /** Reads the changes since the last read (joins one in flight); never rejects. */
  follow(): Promise<void> {
    this.#running ??= this.#read()
      .then(
        () => {
          this.#lastRead = Date.now();
          this.#lastError = '';
        },
        (err: Error) => {
          if (err.message !== this.#lastError)
            this.logger.warn(
              { err: { message: err.message } },
              'credential change feed unreadable; retrying',
            );
          this.#lastError = err.message;
          if (Date.now() - this.#lastRead >= GIVE_UP_MS) this.ctx.clientCredentials.forgetAll();
        },
      )
      .finally(() => (this.#running = undefined));
    return this.#running;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }

  async #read(): Promise<void> {
    const horizon = revocationHorizonSeconds(this.accessTokenTtl);
    for (;;) {
      const position = this.#position ?? '0';
      const page = await this.ctx.revocationFeed.changesAfter(position, PAGE, horizon);
      if (
        this.#position === undefined ||
        BigInt(position) < BigInt(page.floor) ||
        BigInt(position) > BigInt(page.head)
      ) {
        // The first read, or a gap: whatever was cached may predate changes this replica cannot list.
        if (this.#position !== undefined) this.ctx.clientCredentials.forgetAll();
        this.#position = page.head;
        return;
      }
      for (const change of page.changes)
        this.ctx.clientCredentials.forget(change.tenant, change.sub);
      this.#position = page.changes[page.changes.length - 1]?.position ?? position;
      if (page.changes.length < PAGE) return;
    }
  }
}
