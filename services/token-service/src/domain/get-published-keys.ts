import { TenantNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';

/** Clock skew resource servers may allow on exp. */
const CLOCK_SKEW_SECONDS = 60;

/** The realm's JWKS: the active key first, then keys retired less than a token lifetime (+ skew) ago. */
export async function getPublishedKeys(ctx: Pick<IdentityContext, 'signingKeys' | 'realms'>, tenant: string, accessTokenTtl: number): Promise<{ keys: Record<string, unknown>[] }> {
  const rows = await ctx.signingKeys.findPublished(tenant, accessTokenTtl + CLOCK_SKEW_SECONDS);
  if (rows.length === 0 && !(await ctx.realms.find(tenant))) throw new TenantNotFound();
  return { keys: rows.map((row) => row.public_jwk) };
}
