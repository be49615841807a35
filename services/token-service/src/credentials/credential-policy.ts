/**
 * A tenant's credential policy (maximum secret age, what a leak report does, the default grant
 * quota) and each account's own quota. The token endpoint reads both with the cached
 * credential, so each change is announced for every account it touches, as a credential
 * change that revokes nothing: every replica's cache drops them, and the next grant reads the
 * new policy (a new maximum age applies to existing secrets from their creation time).
 */
import type {
  CredentialPolicy,
  CredentialPolicyChange,
  GrantQuota,
  ServiceAccount,
} from '@plant/shared/token-service-client';
import type { CredentialPolicyRow } from './credential-hygiene-repository.js';
import { TenantNotFound, type IdentityContext } from '../platform/index.js';
import { publishChange } from './service-account-credentials.js';
import { getServiceAccount } from '../service-accounts/index.js';
import { assertTenantExists } from '../realms/index.js';

function toCredentialPolicy(row: CredentialPolicyRow): CredentialPolicy {
  return {
    secret_max_age_days: row.secret_max_age_days,
    leak_response: row.leak_response,
    default_quota: { per_minute: row.quota_per_minute, mode: row.quota_mode },
    updated_at: row.updated_at === null ? null : new Date(row.updated_at).toISOString(),
    updated_by: row.updated_by,
    revision: row.revision,
  };
}

export async function getCredentialPolicy(
  ctx: Pick<IdentityContext, 'credentialHygiene' | 'realms'>,
  tenant: string,
): Promise<CredentialPolicy> {
  await assertTenantExists(ctx, tenant);
  return toCredentialPolicy(await ctx.credentialHygiene.policy(tenant));
}

export async function updateCredentialPolicy(
  ctx: Pick<IdentityContext, 'credentialHygiene' | 'publisher'>,
  tenant: string,
  change: CredentialPolicyChange & { actor?: string | undefined },
): Promise<CredentialPolicy> {
  const outcome = await ctx.credentialHygiene.updatePolicy(
    tenant,
    {
      secret_max_age_days: change.secret_max_age_days,
      leak_response: change.leak_response,
      quota_per_minute: change.default_quota?.per_minute,
      quota_mode: change.default_quota?.mode,
    },
    change.actor ?? null,
  );
  if (outcome === undefined) throw new TenantNotFound();
  // At most 25 accounts a tenant: one announcement each.
  await Promise.all(outcome.entries.map((entry) => ctx.publisher.publish(entry)));
  return toCredentialPolicy(outcome.policy);
}

/** The account's own quota (null: the tenant's default from now on). Revokes nothing. */
export async function setServiceAccountQuota(
  ctx: Pick<IdentityContext, 'credentialHygiene' | 'serviceAccounts' | 'realms' | 'publisher'>,
  tenant: string,
  clientId: string,
  quota: GrantQuota | null,
): Promise<ServiceAccount> {
  await publishChange(
    ctx,
    tenant,
    await ctx.credentialHygiene.setQuota(tenant, clientId, quota),
    {},
  );
  return getServiceAccount(ctx, tenant, clientId);
}
