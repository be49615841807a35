/** A service account's permissions to act for others (token exchange, RFC 8693). */
import type { Delegation, DelegationChange } from './internal-api-types.js';
import { account, type ManagementApi } from './management-call.js';

const delegationOf = (body: Delegation): Delegation => ({
  audience: body.audience,
  scope: body.scope,
  created_at: body.created_at,
  created_by: body.created_by,
});

export function getDelegations(
  api: ManagementApi,
  tenant: string,
  clientId: string,
): Promise<Delegation[]> {
  return api.mapped(async () => {
    const body = await api.json<{ delegations: Delegation[] }>(
      'GET',
      `${account(tenant, clientId)}/delegations`,
    );
    return body.delegations.map(delegationOf);
  });
}

export function setDelegations(
  api: ManagementApi,
  tenant: string,
  clientId: string,
  delegations: DelegationChange[],
  actor: string,
): Promise<Delegation[]> {
  return api.mapped(async () => {
    const body = await api.json<{ delegations: Delegation[] }>(
      'PUT',
      `${account(tenant, clientId)}/delegations`,
      { delegations, actor },
    );
    return body.delegations.map(delegationOf);
  });
}
