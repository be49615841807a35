import type { RevocationEntry } from '@plant/shared';
import type { IdentityContext } from './identity-context.js';

/**
 * Deletions older than a token lifetime plus a minute of skew cannot have live tokens: a
 * deletion removes the credentials in its transaction, so every token of the principal was
 * minted before it (the minute covers a grant in flight and clock skew). The snapshot drops
 * such principals, and resource servers forget what it no longer lists; the principal lookup
 * (their fallback) still answers `deleted` for them, since principal rows outlive deletion.
 */
export function deletionHorizonSeconds(accessTokenTtl: number): number {
  return accessTokenTtl + 60;
}

export async function getRevocationSnapshot(ctx: Pick<IdentityContext, 'principals'>, accessTokenTtl: number): Promise<{ entries: RevocationEntry[] }> {
  return { entries: await ctx.principals.revocationSnapshot(deletionHorizonSeconds(accessTokenTtl)) };
}
