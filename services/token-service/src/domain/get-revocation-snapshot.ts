import type { RevocationEntry } from '@plant/shared';
import type { IdentityContext } from './identity-context.js';

/** Deletions older than a token lifetime plus a minute of skew cannot have live tokens. */
export function deletionHorizonSeconds(accessTokenTtl: number): number {
  return accessTokenTtl + 60;
}

export async function getRevocationSnapshot(ctx: Pick<IdentityContext, 'principals'>, accessTokenTtl: number): Promise<{ entries: RevocationEntry[] }> {
  return { entries: await ctx.principals.revocationSnapshot(deletionHorizonSeconds(accessTokenTtl)) };
}
