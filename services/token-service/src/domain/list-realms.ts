import type { IdentityContext } from './identity-context.js';

/**
 * Every realm's name, for the resource servers: a token naming a realm that is not listed is
 * refused without asking for that realm's keys (packages/resource-auth, realm-directory.ts).
 */
export async function listRealms(ctx: Pick<IdentityContext, 'realms'>): Promise<{ realms: string[] }> {
  return { realms: await ctx.realms.listNames() };
}
