/**
 * The tenant as plan reads it: every service account, its credentials (its delegations when the
 * file gives any: otherwise they are not the plan's to compare), and the ETag of each
 * resource read (`ETag` on `/api/v1`), which apply sends back as `If-Match` so a change someone
 * made since the plan is refused (412) rather than overwritten.
 */
import type { ApiClient } from '../api/api-client.js';
import {
  accountPath,
  type Delegation,
  type ServiceAccount,
  type ServiceAccountCredentials,
} from '../api/resources.js';
import type { CurrentAccount } from './plan.js';

export interface TenantState {
  accounts: CurrentAccount[];
  /** ETags by resource path under /api/v1, as read. */
  etags: Record<string, string>;
}

export async function readTenantState(
  api: ApiClient,
  { delegations = false }: { delegations?: boolean } = {},
): Promise<TenantState> {
  const etags: Record<string, string> = {};
  const list = await api.request<ServiceAccount[]>('GET', '/service-accounts');
  if (list.etag) etags['/service-accounts'] = list.etag;
  const accounts: CurrentAccount[] = [];
  // One after another: a tenant has at most 25 accounts, and the API's throttles count calls.
  for (const listed of list.body) {
    const path = accountPath(listed.client_id);
    const one = await api.request<ServiceAccount>('GET', path);
    if (one.etag) etags[path] = one.etag;
    const credentials = await api.request<ServiceAccountCredentials>('GET', `${path}/credentials`);
    if (credentials.etag) etags[`${path}/credentials`] = credentials.etag;
    // After the account's ETag, as every read under it: the tag is never newer than what was read.
    const delegated = delegations
      ? (await api.request<{ delegations: Delegation[] }>('GET', `${path}/delegations`)).body
      : undefined;
    accounts.push({
      account: one.body,
      keys: credentials.body.keys,
      trusts: credentials.body.trusts,
      ...(delegated === undefined ? {} : { delegations: delegated.delegations }),
    });
  }
  return { accounts, etags };
}
