import type { ServiceAccountWithSecret } from '@plant/shared';
import { generateClientSecret } from './client-secrets.js';
import { ServiceAccountNotFound } from './errors.js';
import { getServiceAccount } from './get-service-account.js';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';

/**
 * The new digest replaces the old one in the transaction that bumps the token version: the
 * old secret fails from the moment the new one exists, and tokens minted with it are revoked.
 */
export async function resetServiceAccountSecret(
  ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms' | 'secrets' | 'publisher'>,
  tenant: string,
  clientId: string,
): Promise<ServiceAccountWithSecret> {
  const secret = generateClientSecret();
  const entry = await ctx.serviceAccounts.update(tenant, clientId, { secretDigest: ctx.secrets.digest(secret) });
  if (!entry) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  await ctx.publisher.publish(entry);
  return { ...(await getServiceAccount(ctx, tenant, clientId)), secret };
}
