import type { LiveRevocationEntry, RevocationChanges } from '@plant/shared';
import type { IdentityContext } from './identity-context.js';
import { revocationHorizonSeconds } from './revocation-horizon.js';

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
export async function getRevocationChanges(ctx: Pick<IdentityContext, 'revocationFeed'>, accessTokenTtl: number, after: string, limit: number): Promise<RevocationChanges> {
  const take = Math.min(Math.max(1, limit), MAX_CHANGES_PAGE);
  const page = await ctx.revocationFeed.changesAfter(after, take, revocationHorizonSeconds(accessTokenTtl));
  const position = BigInt(after);
  if (position < BigInt(page.floor) || position > BigInt(page.head)) return { reset: true };
  const last = page.changes[page.changes.length - 1];
  const entries: LiveRevocationEntry[] = [];
  for (const { position: _position, ...entry } of page.changes) if (entry.ttl > 0) entries.push(entry);
  return { reset: false, position: last?.position ?? after, more: last !== undefined && BigInt(last.position) < BigInt(page.head) && page.changes.length === take, entries };
}
