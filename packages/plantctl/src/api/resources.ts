/**
 * The shapes `/api/v1` answers with, as far as plantctl reads them (the OpenAPI document at
 * `{portal}/api/v1/openapi.json` is the whole contract).
 */
export type Role = 'View' | 'Edit';
export type QuotaMode = 'off' | 'log' | 'enforce';

export interface Grant {
  tag: string;
  permission: 'edit';
}

export interface Quota {
  per_minute: number;
  mode: QuotaMode;
}

export interface ServiceAccount {
  name: string;
  client_id: string;
  role: Role;
  grants: Grant[];
  dpop_bound_access_tokens: boolean;
  receive_signals: boolean;
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
  disabled: boolean;
  disabled_at: string | null;
  secret_expires_at: string | null;
  quota: Quota | null;
}

export interface ServiceAccountWithSecret extends ServiceAccount {
  secret: string;
}

export interface ServiceAccountKey {
  id: string;
  alg: string;
  thumbprint: string;
  created_at: string;
  last_used_at: string | null;
}

export interface ServiceAccountTrust {
  id: string;
  issuer: string;
  subject: string;
  audience: string;
  created_at: string;
  last_used_at: string | null;
}

/** One of an account's secrets (at most two live), never its value. */
export interface ServiceAccountSecret {
  id: string;
  created_at: string;
  created_by: string | null;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface ServiceAccountCredentials {
  client_id: string;
  disabled: boolean;
  /** The newest secret's dates. */
  secret: { created_at: string; last_used_at: string | null; expires_at: string | null } | null;
  secrets: ServiceAccountSecret[];
  keys: ServiceAccountKey[];
  trusts: ServiceAccountTrust[];
}

/**
 * One permission to act for others (token exchange, RFC 8693): the target API and the most the
 * account may delegate there, space-separated (`plants:read`, `plants:write` or both).
 */
export interface Delegation {
  audience: string;
  scope: string;
  created_at: string | null;
  created_by: string | null;
}

/** `{audience, scope}`: one entry of the set `PUT …/delegations` puts in place. */
export type DelegationChange = Pick<Delegation, 'audience' | 'scope'>;

export interface User {
  id: string;
  email: string;
  role: string;
  status: string;
  created_at: string;
  last_sign_in_at: string | null;
}

export interface Invitation {
  id: string;
  email: string;
  role: string;
  created_at: string;
  created_by: string | null;
  expires_at: string;
  url?: string;
}

export interface AuditEvent {
  id: string;
  occurred_at: string;
  actor_email: string | null;
  actor_type: string;
  action: string;
  client_id: string | null;
  name: string | null;
  details: unknown;
  address: string | null;
}

/**
 * The same audience as the token service compares them (delegations.ts there): the same text,
 * or the same URL once parsed (`https://api.example` and `https://api.example/`).
 */
export function sameAudience(a: string, b: string): boolean {
  if (a === b) return true;
  const left = URL.parse(a);
  const right = URL.parse(b);
  return left !== null && right !== null && left.href === right.href;
}

/** `/service-accounts/{client_id}` with the id escaped. */
export function accountPath(clientId: string, rest = ''): string {
  return `/service-accounts/${encodeURIComponent(clientId)}${rest}`;
}
