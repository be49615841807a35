import type {
  ServiceAccount,
  ServiceAccountCredentials,
  ServiceAccountKey,
  ServiceAccountTrust,
} from '@plant/shared/token-service-client';
import type {
  AccountCredentialsRow,
  AccountKeyRow,
  AccountTrustRow,
} from '../data-access/service-account-credential-repository.js';
import type { ServiceAccountRow } from '../data-access/service-account-repository.js';

const iso = (at: Date | string | null): string | null =>
  at === null ? null : new Date(at).toISOString();

export function toServiceAccount(row: ServiceAccountRow): ServiceAccount {
  return {
    name: row.name,
    client_id: row.sub,
    role: row.role,
    grants: row.grants.map((g) => ({ tag: g.tag, permission: g.permission })),
    dpop_bound_access_tokens: row.dpop_bound_access_tokens,
    receive_signals: row.receive_signals,
    created_at: iso(row.created_at)!,
    created_by: row.created_by,
    last_used_at: iso(row.last_used_at),
    disabled: row.disabled_at !== null,
    disabled_at: iso(row.disabled_at),
  };
}

export function toServiceAccountKey(row: AccountKeyRow): ServiceAccountKey {
  return {
    id: row.id,
    alg: row.alg,
    thumbprint: row.thumbprint,
    created_at: iso(row.created_at)!,
    created_by: row.created_by,
    last_used_at: iso(row.last_used_at),
  };
}

export function toServiceAccountTrust(row: AccountTrustRow): ServiceAccountTrust {
  return {
    id: row.id,
    issuer: row.issuer,
    subject: row.subject,
    audience: row.audience,
    created_at: iso(row.created_at)!,
    created_by: row.created_by,
    last_used_at: iso(row.last_used_at),
  };
}

export function toServiceAccountCredentials(
  clientId: string,
  row: AccountCredentialsRow,
): ServiceAccountCredentials {
  return {
    client_id: clientId,
    disabled: row.disabled_at !== null,
    secret:
      row.secret === null
        ? null
        : { created_at: iso(row.secret.created_at)!, last_used_at: iso(row.secret.last_used_at) },
    keys: row.keys.map(toServiceAccountKey),
    trusts: row.trusts.map(toServiceAccountTrust),
  };
}
