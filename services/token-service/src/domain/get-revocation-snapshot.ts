import type { RevocationSnapshot } from '@plant/shared';
import type { IdentityContext } from './identity-context.js';
import { revocationHorizonSeconds } from './revocation-horizon.js';

/**
 * Every revocation entry still needed (a change younger than the horizon: see
 * revocation-horizon.ts), and the feed position to continue from. A resource server loads it at
 * start and after a gap it cannot bridge; its size follows the rate of changes, not the history:
 * principals reset or deleted long ago are not in it, whatever their version.
 */
export async function getRevocationSnapshot(ctx: Pick<IdentityContext, 'revocationFeed'>, accessTokenTtl: number): Promise<RevocationSnapshot> {
  const { head, entries } = await ctx.revocationFeed.snapshot(revocationHorizonSeconds(accessTokenTtl));
  return { position: head, entries };
}
