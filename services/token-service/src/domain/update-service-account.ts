import type { Grant, ServiceAccount, ServiceAccountRole } from '@plant/shared';
import { ServiceAccountNotFound } from './errors.js';
import { getServiceAccount } from './get-service-account.js';
import { assertTenantExists } from './get-tenant.js';
import type { IdentityContext } from './identity-context.js';

/**
 * A change of role, grants or the DPoP requirement: the account's older tokens are revoked
 * (version bumped with the change, published after commit). Turning DPoP on thus leaves no
 * bearer token of the account usable; turning it off leaves no bound one.
 */
export async function updateServiceAccount(
  ctx: Pick<IdentityContext, 'serviceAccounts' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  input: { role?: ServiceAccountRole | undefined; grants?: Grant[] | undefined; dpop_bound_access_tokens?: boolean | undefined },
): Promise<ServiceAccount> {
  const entry = await ctx.serviceAccounts.update(tenant, clientId, { role: input.role, grants: input.grants, dpopBoundAccessTokens: input.dpop_bound_access_tokens });
  if (!entry) {
    await assertTenantExists(ctx, tenant);
    throw new ServiceAccountNotFound();
  }
  await ctx.publisher.publish(entry);
  return getServiceAccount(ctx, tenant, clientId);
}
