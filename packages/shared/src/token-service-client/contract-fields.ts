/**
 * What the client answers with: each token-service answer copied field by field into the
 * contract's shape, so an extra field from a newer token service never leaks out.
 */
import type {
  CredentialPolicy,
  GrantQuota,
  Invitation,
  SecretLeak,
  ServiceAccount,
  ServiceAccountKey,
  ServiceAccountSecret,
  ServiceAccountTrust,
  User,
} from './internal-api-types.js';

/** Only the contract's fields travel on: an extra field from a newer token service never leaks out. */
export function serviceAccountOf(body: ServiceAccount): ServiceAccount {
  return {
    name: body.name,
    client_id: body.client_id,
    role: body.role,
    grants: (body.grants ?? []).map((g) => ({ tag: g.tag, permission: g.permission })),
    dpop_bound_access_tokens: body.dpop_bound_access_tokens === true,
    receive_signals: body.receive_signals === true,
    created_at: body.created_at,
    created_by: body.created_by ?? null,
    last_used_at: body.last_used_at ?? null,
    disabled: body.disabled === true,
    disabled_at: body.disabled_at ?? null,
    secret_expires_at: body.secret_expires_at ?? null,
    quota: body.quota == null ? null : quotaOf(body.quota),
    revision: body.revision,
  };
}

export const quotaOf = (body: GrantQuota): GrantQuota => ({
  per_minute: body.per_minute,
  mode: body.mode,
});
export const leakOf = (body: SecretLeak): SecretLeak => ({
  url: body.url,
  source: body.source,
  reporter: body.reporter,
  action: body.action,
  reported_at: body.reported_at,
  secret_current: body.secret_current === true,
  secret_id: body.secret_id ?? null,
});
export const policyOf = (body: CredentialPolicy): CredentialPolicy => ({
  secret_max_age_days: body.secret_max_age_days ?? null,
  leak_response: body.leak_response,
  default_quota: quotaOf(body.default_quota),
  updated_at: body.updated_at ?? null,
  updated_by: body.updated_by ?? null,
  revision: body.revision,
});

const dates = (body: {
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
}) => ({
  created_at: body.created_at,
  created_by: body.created_by ?? null,
  last_used_at: body.last_used_at ?? null,
});
export const keyOf = (body: ServiceAccountKey): ServiceAccountKey => ({
  id: body.id,
  alg: body.alg,
  thumbprint: body.thumbprint,
  ...dates(body),
});
export const secretOf = (body: ServiceAccountSecret): ServiceAccountSecret => ({
  id: body.id,
  expires_at: body.expires_at ?? null,
  ...dates(body),
});
export const trustOf = (body: ServiceAccountTrust): ServiceAccountTrust => ({
  id: body.id,
  issuer: body.issuer,
  subject: body.subject,
  audience: body.audience,
  ...dates(body),
});

/** Only the contract's fields travel on. */
export function userOf(body: User): User {
  const factors = body.factors ?? { passkeys: 0, totp: false, recovery_codes_left: 0 };
  return {
    id: body.id,
    email: body.email,
    role: body.role,
    status: body.status === 'disabled' ? 'disabled' : 'active',
    created_at: body.created_at,
    last_sign_in_at: body.last_sign_in_at ?? null,
    factors: {
      passkeys: Number(factors.passkeys ?? 0),
      totp: factors.totp === true,
      recovery_codes_left: Number(factors.recovery_codes_left ?? 0),
    },
    token_version: Number(body.token_version ?? 0),
    factor_generation: Number(body.factor_generation ?? 0),
    factor_required: body.factor_required === true,
    revision: Number(body.revision ?? 0),
  };
}

export function invitationOf(body: Invitation): Invitation {
  return {
    id: body.id,
    email: body.email,
    role: body.role,
    created_at: body.created_at,
    created_by: body.created_by ?? null,
    expires_at: body.expires_at,
  };
}
