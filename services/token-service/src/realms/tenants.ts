/**
 * Tenants: a tenant is a realm (its own issuer, signing keys, users and service accounts).
 * Reading one is the check every other module's 404 relies on. Creating one, with its first
 * signing key and first Account Admin, is the realm-creation wing's (it sits above people and
 * signing keys, which take the realm's lock and naming from here).
 */
import { TenantNotFound, type IdentityContext } from '../platform/index.js';

export async function getTenant(
  ctx: Pick<IdentityContext, 'realms'>,
  tenant: string,
): Promise<{ tenant: string; created_at: string }> {
  const row = await ctx.realms.find(tenant);
  if (!row) throw new TenantNotFound();
  return { tenant: row.name, created_at: new Date(row.created_at).toISOString() };
}

/**
 * Reads look the realm up only when they find nothing (one round trip when there is an
 * answer): rows cannot outlive their realm, so only an empty answer can mean an unknown tenant.
 */
export async function assertTenantExists(
  ctx: Pick<IdentityContext, 'realms'>,
  tenant: string,
): Promise<void> {
  if (!(await ctx.realms.find(tenant))) throw new TenantNotFound();
}

/**
 * Every realm's name, for the resource servers: a token naming a realm that is not listed is
 * refused without asking for that realm's keys (packages/resource-auth, realm-directory.ts).
 */
export async function listRealms(
  ctx: Pick<IdentityContext, 'realms'>,
): Promise<{ realms: string[] }> {
  return { realms: await ctx.realms.listNames() };
}
