import type {
  SecretLeak,
  ServiceAccount,
  ServiceAccountCredentials,
  ServiceAccountKey,
  ServiceAccountSecret,
  ServiceAccountTrust,
} from '@plant/shared/token-service-client';
import {
  type AccountCredentialsRow,
  type AccountKeyRow,
  type AccountSecretRow,
  type AccountTrustRow,
  type LeakRow,
  secretDeadline,
  secretExpiresAt,
} from '../credentials/index.js';
import type { ServiceAccountRow } from './service-account-repository.js';

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
    secret_expires_at: iso(secretExpiresAt(row.secret_created_at, row.secret_max_age_days)),
    quota:
      row.quota_mode === null || row.quota_per_minute === null
        ? null
        : { per_minute: row.quota_per_minute, mode: row.quota_mode },
    revision: Number(row.revision),
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

/** A secret as the API shows it (never its digest): its expiry is the earlier of its own and the realm's maximum age. */
export function toServiceAccountSecret(
  row: AccountSecretRow,
  maxAgeDays: number | null,
): ServiceAccountSecret {
  const expires = secretDeadline(row.created_at, row.expires_at, maxAgeDays);
  return {
    id: row.id,
    created_at: iso(row.created_at)!,
    created_by: row.created_by,
    expires_at: iso(expires),
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

export function toSecretLeak(row: LeakRow): SecretLeak {
  return {
    url: row.url,
    source: row.source,
    reporter: row.reporter,
    action: row.action,
    reported_at: iso(row.reported_at)!,
    secret_current: row.secret_current,
    secret_id: row.secret_id,
  };
}

export function toServiceAccountCredentials(
  clientId: string,
  row: AccountCredentialsRow,
  leaks: LeakRow[],
): ServiceAccountCredentials {
  return {
    client_id: clientId,
    disabled: row.disabled_at !== null,
    secret:
      row.secret === null
        ? null
        : {
            created_at: iso(row.secret.created_at)!,
            last_used_at: iso(row.secret.last_used_at),
            expires_at: iso(secretExpiresAt(row.secret.created_at, row.secret.max_age_days)),
          },
    secrets: row.secrets.map((secret) => toServiceAccountSecret(secret, row.max_age_days)),
    keys: row.keys.map(toServiceAccountKey),
    trusts: row.trusts.map(toServiceAccountTrust),
    leaks: leaks.map(toSecretLeak),
  };
}
