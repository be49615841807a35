/** The client's service-account calls: list, read, create, change, reset, delete, disable, quota. */
import type {
  GrantQuota,
  ServiceAccount,
  ServiceAccountChange,
  ServiceAccountWithSecret,
} from './internal-api-types.js';
import { serviceAccountOf } from './contract-fields.js';
import { account, realm, seg, type ManagementApi } from './management-call.js';

export function listServiceAccounts(api: ManagementApi, tenant: string): Promise<ServiceAccount[]> {
  return api.mapped(async () =>
    (await api.json<ServiceAccount[]>('GET', `${realm(tenant)}/service-accounts`)).map(
      serviceAccountOf,
    ),
  );
}

export function getServiceAccount(
  api: ManagementApi,
  tenant: string,
  clientId: string,
): Promise<ServiceAccount> {
  return api.mapped(async () =>
    serviceAccountOf(await api.json('GET', `${realm(tenant)}/service-accounts/${seg(clientId)}`)),
  );
}

export function createServiceAccount(
  api: ManagementApi,
  tenant: string,
  name: string,
  actor: string,
): Promise<ServiceAccountWithSecret> {
  return api.mapped(async () => {
    const created = await api.json<ServiceAccountWithSecret>(
      'POST',
      `${realm(tenant)}/service-accounts`,
      { name, actor },
    );
    return { ...serviceAccountOf(created), secret: created.secret };
  });
}

export function updateServiceAccount(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  change: ServiceAccountChange,
  actor: string,
): Promise<ServiceAccount> {
  return api.mapped(async () =>
    serviceAccountOf(
      await api.json('PATCH', `${realm(tenant)}/service-accounts/${seg(clientId)}`, {
        ...change,
        actor,
      }),
    ),
  );
}

export function resetSecret(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  actor: string,
): Promise<ServiceAccountWithSecret> {
  return api.mapped(async () => {
    const reset = await api.json<ServiceAccountWithSecret>(
      'POST',
      `${realm(tenant)}/service-accounts/${seg(clientId)}/reset-secret`,
      { actor },
    );
    return { ...serviceAccountOf(reset), secret: reset.secret };
  });
}

export function deleteServiceAccount(
  api: ManagementApi,
  tenant: string,
  clientId: string,
): Promise<void> {
  return api.mapped(() =>
    api.json<void>('DELETE', `${realm(tenant)}/service-accounts/${seg(clientId)}`),
  );
}

export function setDisabled(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  disabled: boolean,
  actor: string,
): Promise<ServiceAccount> {
  return api.mapped(async () =>
    serviceAccountOf(
      await api.json('POST', `${account(tenant, clientId)}/${disabled ? 'disable' : 'enable'}`, {
        actor,
      }),
    ),
  );
}

export function setQuota(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  quota: GrantQuota | null,
  actor: string,
): Promise<ServiceAccount> {
  return api.mapped(async () =>
    serviceAccountOf(await api.json('PUT', `${account(tenant, clientId)}/quota`, { quota, actor })),
  );
}
