import { TenantNotFound } from './errors.js';
import type { IdentityContext } from './identity-context.js';

export async function getTenant(ctx: Pick<IdentityContext, 'realms'>, tenant: string): Promise<{ tenant: string; created_at: string }> {
  const row = await ctx.realms.find(tenant);
  if (!row) throw new TenantNotFound();
  return { tenant: row.name, created_at: new Date(row.created_at).toISOString() };
}

/**
 * Reads look the realm up only when they find nothing (one round trip when there is an
 * answer): rows cannot outlive their realm, so only an empty answer can mean an unknown tenant.
 */
export async function assertTenantExists(ctx: Pick<IdentityContext, 'realms'>, tenant: string): Promise<void> {
  if (!(await ctx.realms.find(tenant))) throw new TenantNotFound();
}
