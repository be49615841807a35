/**
 * The revocation feed resource servers follow: every change that revokes tokens (a principal's
 * new token version) gets a position, and a reader loads a snapshot once, then pages through
 * the changes after its position. Everything is bounded by one horizon, the longest a revoked
 * token could still be accepted: older changes are neither served nor kept, so the feed's
 * size follows the rate of changes, never the history.
 */
import { BadRequest } from '@plant/shared/api';
import type { Logger } from '@plant/shared/logging';
import {
  parseFeedPosition,
  type LiveRevocationEntry,
  type RevocationChanges,
  type RevocationEntry,
  type RevocationSnapshot,
} from '@plant/shared/token-service-client';
import { PrincipalNotFound, type IdentityContext } from '../platform/index.js';

/**
 * How long a revocation entry is needed (docs/architecture.md, "Revocation on resource servers"). A token minted
 * before a change carries a lower `ver` and expires at most `ACCESS_TOKEN_TTL` after it was
 * minted, so once the change is older than the lifetime plus this margin, no token it revokes
 * can still be accepted anywhere: the map, the snapshot and the store let it go.
 *
 * The margin covers, together: a grant in flight when the change commits (it read the old
 * version and signs just after), the token service's clock running ahead of true time (its
 * `iat`/`exp`), a resource server's clock running behind (it accepts until its own clock passes
 * `exp`), and the 5 s leeway resource servers allow on `exp`. Postgres's clock does not count:
 * a change's age and its `ttl` are both measured by it, and resource servers count a `ttl` from
 * when the answer arrived. docs/hardening.md, "Clock skew", states the budget.
 */
export const REVOCATION_SKEW_MARGIN_SECONDS = 60;

/** The seconds a change stays in the feed, the snapshot and the maps: the longest token lifetime plus the margin. */
export function revocationHorizonSeconds(accessTokenTtl: number): number {
  return accessTokenTtl + REVOCATION_SKEW_MARGIN_SECONDS;
}

/** The most changes one page carries: a page's size is bounded whatever position is asked for. */
export const MAX_CHANGES_PAGE = 1000;

/**
 * One page of the change feed after `after` (a well-formed position: the route checked it).
 *
 * A position the feed cannot continue answers `reset` (load the snapshot), never an error: one
 * below the floor (changes after it were pruned: the reader was away longer than a horizon, or
 * sends a stale or forged position), or one above the head (from the future: forged, or a
 * database restored to an earlier state, whose positions were handed out again). Changes no
 * longer needed (older than the horizon, not pruned yet) move the position but are not sent.
 */
export async function getRevocationChanges(
  ctx: Pick<IdentityContext, 'revocationFeed'>,
  accessTokenTtl: number,
  after: string,
  limit: number,
): Promise<RevocationChanges> {
  const take = Math.min(Math.max(1, limit), MAX_CHANGES_PAGE);
  const page = await ctx.revocationFeed.changesAfter(
    after,
    take,
    revocationHorizonSeconds(accessTokenTtl),
  );
  const position = BigInt(after);
  if (position < BigInt(page.floor) || position > BigInt(page.head)) return { reset: true };
  const last = page.changes[page.changes.length - 1];
  const entries: LiveRevocationEntry[] = [];
  for (const { position: _position, ...entry } of page.changes)
    if (entry.ttl > 0) entries.push(entry);
  return {
    reset: false,
    position: last?.position ?? after,
    more:
      last !== undefined &&
      BigInt(last.position) < BigInt(page.head) &&
      page.changes.length === take,
    entries,
  };
}

/** The query of `GET /internal/v1/revocations/changes`. */
export const CHANGES_QUERY = ['after', 'limit'] as const;

/**
 * `after`: a position exactly as the feed writes them (0 up to the int64 maximum, decimal, no
 * sign or leading zero), required; `limit`: 1..MAX_CHANGES_PAGE, default the maximum. Anything
 * else, repeated parameters included, is a 400: no input reaches Postgres as an out-of-range bound.
 */
export function parseChangesQuery(query: Record<string, unknown>): {
  after: string;
  limit: number;
} {
  const after = parseFeedPosition(query.after);
  if (after === undefined)
    throw new BadRequest(
      'after must be a feed position: a decimal integer from 0 to 9223372036854775807',
    );
  const raw = query.limit;
  if (raw === undefined) return { after, limit: MAX_CHANGES_PAGE };
  const limit = typeof raw === 'string' && /^[1-9][0-9]{0,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit <= MAX_CHANGES_PAGE))
    throw new BadRequest(`limit must be an integer between 1 and ${MAX_CHANGES_PAGE}`);
  return { after, limit };
}

/**
 * Every revocation entry still needed (a change younger than the horizon: see
 * `revocationHorizonSeconds`), and the feed position to continue from. A resource server loads it at
 * start and after a gap it cannot bridge; its size follows the rate of changes, not the history:
 * principals reset or deleted long ago are not in it, whatever their version.
 */
export async function getRevocationSnapshot(
  ctx: Pick<IdentityContext, 'revocationFeed'>,
  accessTokenTtl: number,
): Promise<RevocationSnapshot> {
  const { head, entries } = await ctx.revocationFeed.snapshot(
    revocationHorizonSeconds(accessTokenTtl),
  );
  return { position: head, entries };
}

/**
 * One principal's entry, for a resource server that cannot follow the feed (its fallback): the
 * version and deletion, and the credentials revoked within the horizon (`credentials`, absent
 * when none: decision 0035).
 */
export async function getRevocationEntry(
  ctx: Pick<IdentityContext, 'principals' | 'revocationFeed'>,
  accessTokenTtl: number,
  tenant: string,
  sub: string,
): Promise<RevocationEntry> {
  const [entry, credentials] = await Promise.all([
    ctx.principals.findRevocationEntry(tenant, sub),
    ctx.revocationFeed.revokedCredentials(tenant, sub, revocationHorizonSeconds(accessTokenTtl)),
  ]);
  if (!entry) throw new PrincipalNotFound();
  return credentials.length === 0 ? entry : { ...entry, credentials };
}

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
 * Lets the revocation store forget what no token can need any more (`revocationHorizonSeconds`):
 * changes older than the horizon, and the rows of principals deleted longer ago than that (their
 * credentials went with the deletion, and the principal lookup's 404 counts as revoked at the
 * resource servers). What is younger than the horizon is never touched, so a token minted just
 * before a reset stays refused until it expires, pruning or not.
 */
export async function pruneRevocations(
  ctx: Pick<IdentityContext, 'revocationFeed'>,
  accessTokenTtl: number,
): Promise<PruneResult> {
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
          if (result.changes + result.principals > 0)
            this.logger.info({ pruned: result }, 'revocation store pruned');
          return result;
        },
        (err: Error) => {
          this.logger.warn(
            { err: { message: err.message } },
            'revocation prune failed; retrying at the next run',
          );
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
