/**
 * The shapes of the token service's internal API and of the revocation channel
 * (docs/architecture.md). The token service produces them; account-admin and the resource
 * servers consume them. One definition, so a change on one side is a compile error on the other.
 */
import { z } from 'zod';

/** Bounds the token service enforces and account-admin checks first (and shows in its forms). */
export const SERVICE_ACCOUNT_NAME_MAX = 64;
export const MAX_SERVICE_ACCOUNTS = 25;
export const MAX_GRANTS = 50;
/** Public keys (`private_key_jwt`) one service account may hold. */
export const MAX_KEYS_PER_SERVICE_ACCOUNT = 5;
/** Trusted workloads (federation) one service account may hold. */
export const MAX_TRUSTS_PER_SERVICE_ACCOUNT = 10;
/** Bounds of a trust's issuer URL, subject and audience. */
export const TRUST_FIELD_MAX = 512;
/** Bound of an uploaded PEM public key (an 8192-bit RSA key's is under 1.5 KiB). */
export const PUBLIC_KEY_PEM_MAX = 8192;

export type ServiceAccountRole = 'View' | 'Edit';
export type UserRole = 'View' | 'Edit' | 'Account Admin';

/** Edit access to the plants of one tag, on top of a service account's role. */
export interface Grant {
  tag: string;
  permission: 'edit';
}

export interface ServiceAccount {
  name: string;
  client_id: string;
  role: ServiceAccountRole;
  grants: Grant[];
  /** Tokens only with a DPoP proof, bound to its key (RFC 9449 client metadata of the same name). */
  dpop_bound_access_tokens: boolean;
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
  /** A disabled account's tokens are refused and none of its credentials works until it is enabled. */
  disabled: boolean;
  disabled_at: string | null;
}

/** A public key of a service account (`private_key_jwt`); `id` is the `kid` its assertions name. */
export interface ServiceAccountKey {
  id: string;
  alg: string;
  /** RFC 7638 thumbprint (SHA-256, base64url). */
  thumbprint: string;
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
}

/** A trusted workload: tokens of `issuer` with this `subject` and `audience` authenticate the account. */
export interface ServiceAccountTrust {
  id: string;
  issuer: string;
  subject: string;
  audience: string;
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
}

/** Every credential of a service account; the secret only as its dates (it is never stored). */
export interface ServiceAccountCredentials {
  client_id: string;
  disabled: boolean;
  secret: { created_at: string; last_used_at: string | null } | null;
  keys: ServiceAccountKey[];
  trusts: ServiceAccountTrust[];
}

/** A key to add: a public JWK, or a PEM public key (SPKI or PKCS#1). */
export type NewServiceAccountKey = { jwk: Record<string, unknown> } | { pem: string };

export interface NewServiceAccountTrust {
  issuer: string;
  subject: string;
  audience: string;
}

/** What a service-account update may change: at least one of them (each bumps the token version). */
export interface ServiceAccountChange {
  role?: ServiceAccountRole;
  grants?: Grant[];
  dpop_bound_access_tokens?: boolean;
}

/** Answered only by create and reset-secret: the one time the secret is ever shown. */
export type ServiceAccountWithSecret = ServiceAccount & { secret: string };

export interface User {
  id: string;
  email: string;
  role: UserRole;
  created_at: string;
}

/** A person's second factor as the token service lists it (never its key or secret). */
export interface UserFactor {
  id: string;
  kind: 'passkey' | 'totp';
  label: string;
  created_at: string;
  last_used_at: string | null;
}

export interface UserFactors {
  factors: UserFactor[];
  /** Unused recovery codes of the person's current set. */
  recovery_codes_left: number;
}

/** A realm's second-factor policy: must an Account Admin hold a second factor? */
export interface FactorPolicy {
  require_admin_factor: boolean;
}

/** The Redis channel on which the token service publishes every `RevocationEntry`. */
export const REVOCATION_CHANNEL = 'plantstore:revocations';

/** A principal's token version (tokens with a lower `ver` are revoked) and whether it is deleted. */
export interface RevocationEntry {
  tenant: string;
  sub: string;
  version: number;
  deleted: boolean;
}

/**
 * An entry of the revocation snapshot or change feed: the fact, and `ttl`, how many more seconds
 * it is needed (until every token minted before it has expired, plus the skew margin). A resource
 * server forgets it after that, counted from when the answer arrived: no clock is compared across
 * machines.
 */
export interface LiveRevocationEntry extends RevocationEntry {
  ttl: number;
}

/**
 * `GET /internal/v1/revocations`: every entry still needed, and the feed position it brings a
 * reader to (a decimal int64 as a string; continue with the changes after it).
 */
export interface RevocationSnapshot {
  position: string;
  entries: LiveRevocationEntry[];
}

/**
 * `GET /internal/v1/revocations/changes?after=<position>`: the changes after `position`, one page
 * (`more`: ask again from the new `position` at once). `reset`: the position cannot be continued
 * (older than what was pruned, or ahead of the feed): load the snapshot instead.
 */
export type RevocationChanges =
  | { reset: false; position: string; more: boolean; entries: LiveRevocationEntry[] }
  | { reset: true };

export const ServiceAccountRoleSchema = z.enum(['View', 'Edit'], {
  error: 'role must be "View" or "Edit"',
});

/** A grants list: at most MAX_GRANTS entries, each tag once; `grant` is the caller's element schema. */
export function grantsSchema<G extends z.ZodType<Grant>>(grant: G) {
  return z
    .array(grant, { error: 'grants must be an array' })
    .max(MAX_GRANTS, { error: `grants must have at most ${MAX_GRANTS} entries` })
    .refine((grants) => new Set(grants.map((g) => g.tag)).size === grants.length, {
      error: 'grants must not repeat a tag',
    });
}
