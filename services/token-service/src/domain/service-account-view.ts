import type { ServiceAccount } from '@plant/shared';
import type { ServiceAccountRow } from '../data-access/service-account-repository.js';

export function toServiceAccount(row: ServiceAccountRow): ServiceAccount {
  return {
    name: row.name,
    client_id: row.sub,
    role: row.role,
    grants: row.grants.map((g) => ({ tag: g.tag, permission: g.permission })),
    dpop_bound_access_tokens: row.dpop_bound_access_tokens,
    created_at: new Date(row.created_at).toISOString(),
    created_by: row.created_by,
    last_used_at: row.last_used_at === null ? null : new Date(row.last_used_at).toISOString(),
  };
}
