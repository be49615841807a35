/**
 * The shapes of the token service's internal API and of the revocation channel
 * (docs/architecture.md). The token service produces them; account-admin and the resource
 * servers consume them. One definition, so a change on one side is a compile error on the other.
 */
import { isLosslessNumber } from 'lossless-json';
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
  /** May receive Shared Signals: its grants may ask for `ssf.manage` and `ssf.read`. */
  receive_signals: boolean;
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
  /** A disabled account's tokens are refused and none of its credentials works until it is enabled. */
  disabled: boolean;
  disabled_at: string | null;
  /** When the secret stops working under the tenant's maximum secret age; null: no secret, or no maximum. */
  secret_expires_at: string | null;
  /** This account's grant quota; null: the tenant's default applies. */
  quota: GrantQuota | null;
  /** Counted up by every change of the account (settings, credentials, state): its `ETag` (http/precondition.ts). */
  revision: number;
}

/** What happens to grants over a quota: nothing (`off`), a metric and an audit event (`log`), or 429 (`enforce`). */
export type QuotaMode = 'off' | 'log' | 'enforce';
export const QUOTA_MODES = ['off', 'log', 'enforce'] as const;
/** Bounds of a quota's grants per minute. */
export const QUOTA_PER_MINUTE_MIN = 1;
export const QUOTA_PER_MINUTE_MAX = 100_000;
/** Bounds of a tenant's maximum secret age, in days. */
export const SECRET_MAX_AGE_DAYS_MIN = 1;
export const SECRET_MAX_AGE_DAYS_MAX = 730;

/** Client-credentials grants per minute one service account may obtain, counted across every replica. */
export interface GrantQuota {
  per_minute: number;
  mode: QuotaMode;
}

/** What a leak report does to a live secret: remove it at once, or only record and show it. */
export type LeakResponse = 'revoke' | 'notify';

/** A tenant's policy for its service-account credentials. */
export interface CredentialPolicy {
  /** Secrets older than this stop working (from their creation); null: no maximum. */
  secret_max_age_days: number | null;
  leak_response: LeakResponse;
  /** The quota of every account without one of its own. */
  default_quota: GrantQuota;
  updated_at: string | null;
  updated_by: string | null;
  /** Counted up by every change: account-admin answers it as the policy's `ETag`. */
  revision: number;
}

export interface CredentialPolicyChange {
  secret_max_age_days?: number | null;
  leak_response?: LeakResponse;
  default_quota?: GrantQuota;
}

/** Where a secret of the account was reported found, and what was done. */
export interface SecretLeak {
  url: string;
  source: string;
  /** Who reported it ("GitHub secret scanning"). */
  reporter: string;
  action: 'revoked' | 'notified';
  reported_at: string;
  /** The leaked secret still works: it was only reported, and not reset since. */
  secret_current: boolean;
  /** Which of the account's secrets leaked (its id), when the report named one the account held. */
  secret_id: string | null;
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
/** One of an account's secrets (at most two live); its value is shown once, when it is made. */
export interface ServiceAccountSecret {
  id: string;
  created_at: string;
  created_by: string | null;
  /** When it stops working: its own expiry or the realm's maximum age, whichever is first; null: never. */
  expires_at: string | null;
  last_used_at: string | null;
}

/** Answered only by "add a secret": the one time the new secret is shown. */
export type ServiceAccountSecretWithValue = ServiceAccountSecret & { secret: string };

/** A second secret to add: optionally expiring (an ISO 8601 instant in the future). */
export interface NewServiceAccountSecret {
  expires_at?: string;
}

export interface ServiceAccountCredentials {
  client_id: string;
  disabled: boolean;
  /** The newest secret (kept for clients of the single-secret API); `secrets` lists each. */
  secret: { created_at: string; last_used_at: string | null; expires_at: string | null } | null;
  /** Every secret, oldest first: at most two. */
  secrets: ServiceAccountSecret[];
  keys: ServiceAccountKey[];
  trusts: ServiceAccountTrust[];
  /** Where its secrets were reported leaked, latest first. */
  leaks: SecretLeak[];
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
  receive_signals?: boolean;
}

/** Answered only by create and reset-secret: the one time the secret is ever shown. */
export type ServiceAccountWithSecret = ServiceAccount & { secret: string };

/** A person of a realm as the internal API answers it. */
export interface User {
  id: string;
  email: string;
  role: UserRole;
  /** A disabled person cannot sign in; their tokens are revoked. */
  status: UserStatus;
  created_at: string;
  last_sign_in_at: string | null;
  factors: UserFactorCounts;
  /** The person's token version (internal: account-admin keeps it in portal sessions, never shows it). */
  token_version: number;
  /**
   * Moved each time a second factor is taken away from the person (internal, as token_version):
   * a portal session opened at an older generation ends.
   */
  factor_generation: number;
  /** The realm requires this person to hold a second factor (an Account Admin where the policy is on); internal. */
  factor_required: boolean;
  /** Counted up by every change of the person's role or status: their `ETag` (http/precondition.ts). */
  revision: number;
}

export type UserStatus = 'active' | 'disabled';

/** How many second factors a person has enrolled; never a factor itself. */
export interface UserFactorCounts {
  passkeys: number;
  totp: boolean;
  recovery_codes_left: number;
}

/** What a change of a person may do: a new role or a new status (one of them). */
export interface UserChange {
  role?: UserRole;
  status?: UserStatus;
}

/** A pending (or just created) invitation; never its token. */
export interface Invitation {
  id: string;
  email: string;
  role: UserRole;
  created_at: string;
  created_by: string | null;
  expires_at: string;
}

/**
 * An invitation's revision, the validator of its `ETag`: an invitation is made and then revoked,
 * accepted or left to expire, never changed, so while it is pending it has this one state. A
 * revocation conditional on another revision is 412; one on a revocation that lost the race
 * finds nothing pending, which under `If-Match` is 412 too.
 */
export const INVITATION_REVISION = 1;

/**
 * A second factor's revision, the validator of its `ETag`: a factor is enrolled and then
 * removed, never changed, so while it is held it has this one state. A removal conditional on
 * another revision is 412; one that lost the race to another removal finds nothing, which
 * under `If-Match` is 412 too.
 */
export const FACTOR_REVISION = 1;

/** Answered only at creation: the link that carries the token, the one time it is shown. */
export type InvitationWithUrl = Invitation & { url: string };

/** `GET /internal/v1/realms/:t/invitations?limit=&cursor=`: a page, newest first; `next_cursor` null on the last. */
export interface InvitationPage {
  invitations: Invitation[];
  next_cursor: string | null;
}

/**
 * `GET /internal/v1/realms/:t/security-events`: what happened at the realm itself, one entry of
 * the token service's people audit trail on the wire. Not a Shared Signals Security Event Token.
 */
export interface RealmSecurityEvent {
  id: string;
  occurred_at: string;
  actor_sub: string | null;
  actor_email: string | null;
  action: string;
  target_sub: string | null;
  target_email: string | null;
  details: Record<string, unknown>;
  address: string | null;
  request_id: string | null;
}

/**
 * How long the people trail keeps successful sign-ins (`user.sign_in`): a person's newest
 * `perPerson`, none older than `days`. The token service prunes to it at each sign-in; the
 * portal's Activity says it.
 */
export const SIGN_IN_EVENT_RETENTION = { perPerson: 50, days: 90 } as const;

/** Longest email a person may have (RFC 5321's path limit). */
export const EMAIL_MAX = 254;
/**
 * Invitations one tenant may have pending at once (neither accepted, revoked nor expired):
 * beyond it a new email is refused (409) until one is revoked, accepted or expires. A tenant's
 * team grows by a handful at a time; the bound keeps one tenant from filling the table, and
 * the People page from listing more than it can show.
 */
export const MAX_PENDING_INVITATIONS = 100;
/** Largest page of `GET …/invitations` (internal and public): the whole bound fits one page. */
export const INVITATION_PAGE_MAX = 100;
/** Default lifetime of an invitation link, seconds (7 days). */
export const INVITATION_TTL_DEFAULT_SECONDS = 7 * 24 * 3600;

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
  /** Counted up by every change: account-admin answers it as the policy's `ETag`. */
  revision: number;
}

export {
  type LiveRevocationEntry,
  MAX_ENTRY_CREDENTIALS,
  REVOCATION_CHANNEL,
  type RevocationChanges,
  type RevocationEntry,
  type RevocationSnapshot,
} from '@plant/resource-auth/platform/revocation-types';

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

/** An integer from `min` to `max`, as JSON bodies arrive (`parseJsonLossless` keeps numbers as `LosslessNumber`s). */
function wholeNumber(name: string, min: number, max: number) {
  const error = `${name} must be an integer from ${min} to ${max}`;
  return z.preprocess(
    (value) => (isLosslessNumber(value) ? Number(value.value) : value),
    z.number({ error }).int({ error }).min(min, { error }).max(max, { error }),
  );
}

export const GrantQuotaSchema = z.object(
  {
    per_minute: wholeNumber('per_minute', QUOTA_PER_MINUTE_MIN, QUOTA_PER_MINUTE_MAX),
    mode: z.enum(QUOTA_MODES, { error: 'mode must be "off", "log" or "enforce"' }),
  },
  { error: 'quota must be an object {per_minute, mode}' },
);

/** The fields of a credential-policy change (both services' bodies); at least one is required. */
export const credentialPolicyFields = {
  secret_max_age_days: wholeNumber(
    'secret_max_age_days',
    SECRET_MAX_AGE_DAYS_MIN,
    SECRET_MAX_AGE_DAYS_MAX,
  )
    .nullable()
    .optional(),
  leak_response: z
    .enum(['revoke', 'notify'], { error: 'leak_response must be "revoke" or "notify"' })
    .optional(),
  default_quota: GrantQuotaSchema.optional(),
};

export const hasPolicyChange = (body: CredentialPolicyChange) =>
  body.secret_max_age_days !== undefined ||
  body.leak_response !== undefined ||
  body.default_quota !== undefined;
export const POLICY_CHANGE_REQUIRED =
  'secret_max_age_days, leak_response or default_quota is required';

/** The scopes a service account may be allowed to delegate (token exchange): the resource scopes. */
export const DELEGABLE_SCOPES = ['plants:read', 'plants:write'] as const;

/**
 * A service account's permission to act for others (OAuth 2.0 Token Exchange, RFC 8693): it may
 * exchange a subject's token of its realm for one for `audience`, with at most `scope`
 * (space-separated, of `DELEGABLE_SCOPES`) and never more than the subject's own token had.
 */
export interface Delegation {
  audience: string;
  scope: string;
  created_at: string | null;
  created_by: string | null;
}

/** One entry of the whole set `setDelegations` puts in place. */
export interface DelegationChange {
  audience: string;
  scope: string;
}

/** At most this many target audiences per account (a realm issues for few: the Plant Store and `API_AUDIENCES`). */
export const MAX_DELEGATIONS_PER_SERVICE_ACCOUNT = 20;

const DELEGATION_AUDIENCE_MAX = 2048;
const DELEGABLE = new Set<string>(DELEGABLE_SCOPES);

/** One permission to act for others: an absolute URL (a resource indicator, RFC 8707) and a non-empty subset of `DELEGABLE_SCOPES`. */
export const DelegationChangeSchema = z.object(
  {
    audience: z
      .string({ error: 'audience must be a string' })
      .min(1, { error: 'audience is required' })
      .max(DELEGATION_AUDIENCE_MAX, {
        error: `audience must be at most ${DELEGATION_AUDIENCE_MAX} characters`,
      })
      .refine((audience) => URL.canParse(audience), { error: 'audience must be an absolute URL' }),
    scope: z
      .string({ error: 'scope must be a string' })
      .max(64, { error: 'scope must be "plants:read", "plants:write" or both' })
      .refine(
        (scope) => {
          const values = scope.split(' ');
          return (
            values.length > 0 &&
            values.every((v) => DELEGABLE.has(v)) &&
            new Set(values).size === values.length
          );
        },
        { error: 'scope must be "plants:read", "plants:write" or both, space-separated' },
      ),
  },
  { error: 'each delegation must be an object {audience, scope}' },
);

/** The whole set of an account's permissions to act for others, each audience once. */
export const DelegationsSchema = z
  .array(DelegationChangeSchema, { error: 'delegations must be an array' })
  .max(MAX_DELEGATIONS_PER_SERVICE_ACCOUNT, {
    error: `delegations must have at most ${MAX_DELEGATIONS_PER_SERVICE_ACCOUNT} entries`,
  })
  .refine((list) => new Set(list.map((d) => d.audience)).size === list.length, {
    error: 'delegations must not repeat an audience',
  });
