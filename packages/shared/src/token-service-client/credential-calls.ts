/** The client's credential calls: a service account's secret, keys and trusts, and the tenant's credential policy. */
import type {
  CredentialPolicy,
  CredentialPolicyChange,
  NewServiceAccountKey,
  NewServiceAccountSecret,
  NewServiceAccountTrust,
  ServiceAccountCredentials,
  ServiceAccountKey,
  ServiceAccountSecretWithValue,
  ServiceAccountTrust,
} from './internal-api-types.js';
import { leakOf, policyOf, keyOf, secretOf, trustOf } from './contract-fields.js';
import { account, realm, seg, type ManagementApi } from './management-call.js';

export function getCredentials(
  api: ManagementApi,
  tenant: string,
  clientId: string,
): Promise<ServiceAccountCredentials> {
  return api.mapped(async () => {
    const body = await api.json<ServiceAccountCredentials>(
      'GET',
      `${account(tenant, clientId)}/credentials`,
    );
    const secret =
      body.secret === null
        ? null
        : {
            created_at: body.secret.created_at,
            last_used_at: body.secret.last_used_at ?? null,
            expires_at: body.secret.expires_at ?? null,
          };
    return {
      client_id: body.client_id,
      disabled: body.disabled === true,
      secret,
      secrets: (body.secrets ?? []).map(secretOf),
      keys: body.keys.map(keyOf),
      trusts: body.trusts.map(trustOf),
      leaks: (body.leaks ?? []).map(leakOf),
    };
  });
}

export function addKey(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  key: NewServiceAccountKey,
  actor: string,
): Promise<ServiceAccountKey> {
  return api.mapped(async () =>
    keyOf(await api.json('POST', `${account(tenant, clientId)}/keys`, { ...key, actor })),
  );
}

export function removeKey(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  keyId: string,
): Promise<void> {
  return api.mapped(() =>
    api.json<void>('DELETE', `${account(tenant, clientId)}/keys/${seg(keyId)}`),
  );
}

export function addTrust(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  trust: NewServiceAccountTrust,
  actor: string,
): Promise<ServiceAccountTrust> {
  return api.mapped(async () =>
    trustOf(await api.json('POST', `${account(tenant, clientId)}/trusts`, { ...trust, actor })),
  );
}

export function removeTrust(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  trustId: string,
): Promise<void> {
  return api.mapped(() =>
    api.json<void>('DELETE', `${account(tenant, clientId)}/trusts/${seg(trustId)}`),
  );
}

export function removeSecret(api: ManagementApi, tenant: string, clientId: string): Promise<void> {
  return api.mapped(() => api.json<void>('DELETE', `${account(tenant, clientId)}/secret`));
}

/** A second secret beside the first (at most two live); the answer is the one time it is shown. */
export function addSecret(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  secret: NewServiceAccountSecret,
  actor: string,
): Promise<ServiceAccountSecretWithValue> {
  return api.mapped(async () => {
    const body = await api.json<ServiceAccountSecretWithValue>(
      'POST',
      `${account(tenant, clientId)}/secrets`,
      { ...secret, actor },
    );
    return { ...secretOf(body), secret: body.secret };
  });
}

/** One secret goes, and exactly the tokens it obtained are revoked. */
export function removeSecretById(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  secretId: string,
): Promise<void> {
  return api.mapped(() =>
    api.json<void>('DELETE', `${account(tenant, clientId)}/secrets/${seg(secretId)}`),
  );
}

export function getCredentialPolicy(api: ManagementApi, tenant: string): Promise<CredentialPolicy> {
  return api.mapped(async () =>
    policyOf(await api.json('GET', `${realm(tenant)}/credential-policy`)),
  );
}

export function updateCredentialPolicy(
  api: ManagementApi,
  tenant: string,
  change: CredentialPolicyChange,
  actor: string,
): Promise<CredentialPolicy> {
  return api.mapped(async () =>
    policyOf(await api.json('PATCH', `${realm(tenant)}/credential-policy`, { ...change, actor })),
  );
}
