/** The client's second-factor calls: a person's factors and the tenant's factor policy. */
import type { FactorPolicy, UserFactors } from './internal-api-types.js';
import { realm, seg, type ManagementApi } from './management-call.js';

export function listUserFactors(
  api: ManagementApi,
  tenant: string,
  userId: string,
): Promise<UserFactors> {
  return api.mapped(() => api.json('GET', `${realm(tenant)}/users/${seg(userId)}/factors`));
}

export function removeUserFactor(
  api: ManagementApi,
  tenant: string,
  userId: string,
  factorId: string,
  actor: string,
): Promise<void> {
  return api.mapped(() =>
    api.json<void>('DELETE', `${realm(tenant)}/users/${seg(userId)}/factors/${seg(factorId)}`, {
      actor,
    }),
  );
}

export function resetUserFactors(
  api: ManagementApi,
  tenant: string,
  userId: string,
  actor: string,
): Promise<{ removed: number }> {
  return api.mapped(() =>
    api.json('DELETE', `${realm(tenant)}/users/${seg(userId)}/factors`, { actor }),
  );
}

export function getFactorPolicy(api: ManagementApi, tenant: string): Promise<FactorPolicy> {
  return api.mapped(() => api.json('GET', `${realm(tenant)}/factor-policy`));
}

export function setFactorPolicy(
  api: ManagementApi,
  tenant: string,
  requireAdminFactor: boolean,
  actor: string,
): Promise<FactorPolicy> {
  return api.mapped(() =>
    api.json('PUT', `${realm(tenant)}/factor-policy`, {
      require_admin_factor: requireAdminFactor,
      actor,
    }),
  );
}
