import type { RevocationEntry } from '@plant/shared';
import { PrincipalNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';

export async function getRevocationEntry(ctx: Pick<IdentityContext, 'principals'>, tenant: string, sub: string): Promise<RevocationEntry> {
  const entry = await ctx.principals.findRevocationEntry(tenant, sub);
  if (!entry) throw new PrincipalNotFound();
  return entry;
}
