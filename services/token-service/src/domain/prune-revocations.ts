import type { Logger } from '@plant/shared';
import type { IdentityContext } from './identity-context.js';
import { revocationHorizonSeconds } from './revocation-horizon.js';

/** Rows deleted per statement, and statements per run: a run's work is bounded, the next run continues. */
const PRUNE_BATCH = 5000;
const MAX_BATCHES_PER_RUN = 20;
/** How often each replica prunes. Any replica may: two at once delete the same rows once. */
export const PRUNE_EVERY_MS = 60_000;

export interface PruneResult {
  changes: number;
  principals: number;
}

/**
 * Lets the revocation store forget what no token can need any more (revocation-horizon.ts):
 * changes older than the horizon, and the rows of principals deleted longer ago than that (their
 * credentials went with the deletion, and the principal lookup's 404 counts as revoked at the
 * resource servers). What is younger than the horizon is never touched, so a token minted just
 * before a reset stays refused until it expires, pruning or not.
 */
export async function pruneRevocations(ctx: Pick<IdentityContext, 'revocationFeed'>, accessTokenTtl: number): Promise<PruneResult> {
  const horizon = revocationHorizonSeconds(accessTokenTtl);
  const result: PruneResult = { changes: 0, principals: 0 };
  for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
    const pruned = await ctx.revocationFeed.pruneChanges(horizon, PRUNE_BATCH);
    result.changes += pruned;
    if (pruned < PRUNE_BATCH) break;
  }
  for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
    const purged = await ctx.revocationFeed.purgeDeletedPrincipals(horizon, PRUNE_BATCH);
    result.principals += purged;
    if (purged < PRUNE_BATCH) break;
  }
  return result;
}

/** Prunes at start and every `PRUNE_EVERY_MS`; one run at a time; a failed run waits for the next. */
export class RevocationPruner {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<PruneResult | undefined> | undefined;

  constructor(
    private readonly ctx: Pick<IdentityContext, 'revocationFeed'>,
    private readonly accessTokenTtl: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    void this.run();
    this.#timer = setInterval(() => void this.run(), PRUNE_EVERY_MS);
    this.#timer.unref();
  }

  /** Runs now, or joins the run in flight; never rejects (undefined when it failed). */
  run(): Promise<PruneResult | undefined> {
    this.#running ??= pruneRevocations(this.ctx, this.accessTokenTtl)
      .then(
        (result) => {
          if (result.changes + result.principals > 0) this.logger.info({ pruned: result }, 'revocation store pruned');
          return result;
        },
        (err: Error) => {
          this.logger.warn({ err: { message: err.message } }, 'revocation prune failed; retrying at the next run');
          return undefined;
        },
      )
      .finally(() => (this.#running = undefined));
    return this.#running;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}
