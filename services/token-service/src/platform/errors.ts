/**
 * The token service's one error catalogue: every error class of its product code, grouped by
 * the wing that throws it (the shape of oidc-provider's lib/helpers/errors.js: one class per
 * meaning, its name the code, a flag for what the caller may see).
 *
 * Three kinds, marked on each group or class:
 * - wire (JSON APIs): an `AppError` made by `wireError(code, status, message, expose)`. The
 *   error middleware (@plant/shared/http, `appErrorResponse`) answers `{error: <status>,
 *   message}` with the error's headers; `code` is the class name, which traces (span status),
 *   logs and tests name it by. `expose` says whether the message may be shown to the caller;
 *   when false the caller gets the status's generic text instead (STATUS_TEXT).
 * - wire (token endpoint): an oidc-provider error, answered in RFC 6749's `{error,
 *   error_description}`; its code is the `error` string. oidc-provider's own flag decides what is
 *   shown: `expose` is true below 500 (error and description shown), false from 500 (the
 *   provider would answer server_error; realm-provider.ts turns those into 503
 *   temporarily_unavailable first).
 * - internal: never leaves the process; a signal between modules, caught and turned into a
 *   wire error or an outcome by the module named on it. Its message is for logs only.
 *
 * Wire codes and messages are the public contract: never change one here.
 */
import { AppError, type AppErrorOptions } from '@plant/shared/api';
import {
  MAX_KEYS_PER_SERVICE_ACCOUNT,
  MAX_PENDING_INVITATIONS,
  MAX_SERVICE_ACCOUNTS,
  MAX_TRUSTS_PER_SERVICE_ACCOUNT,
} from '@plant/shared/token-service-client';
import { errors } from 'oidc-provider';

type WireErrorClass = new (message?: string, options?: AppErrorOptions) => AppError;

/**
 * `createError` of @plant/shared/api with the flag declared rather than derived from the
 * status: a class named `code` answering `status` with `message` unless the thrower gives
 * its own; `expose` says whether the message may reach the caller (a thrower may still pass
 * `expose` in the options).
 */
function wireError(code: string, status: number, message: string, expose: boolean): WireErrorClass {
  const cls = class extends AppError {
    constructor(text: string = message, options: AppErrorOptions = {}) {
      super(status, text, { expose, ...options });
    }
  };
  Object.defineProperty(cls, 'name', { value: code });
  Object.defineProperty(cls.prototype, 'name', { value: code });
  return cls;
}

// --- realms/: tenants (realms) — wire (JSON) ---

export const TenantNotFound = wireError('TenantNotFound', 404, 'Tenant not found', true);
export const TenantExists = wireError('TenantExists', 409, 'Tenant already exists', true);

/** Internal: the realm row exists already (unique violation); tenants.ts answers `TenantExists`. */
export class RealmExists extends Error {}

// --- service-accounts/ — wire (JSON) ---

export const ServiceAccountNotFound = wireError(
  'ServiceAccountNotFound',
  404,
  'Service account not found',
  true,
);
export const ServiceAccountNameTaken = wireError(
  'ServiceAccountNameTaken',
  409,
  'A service account with this name already exists',
  true,
);
export const ServiceAccountLimitReached = wireError(
  'ServiceAccountLimitReached',
  409,
  `This tenant already has the maximum of ${MAX_SERVICE_ACCOUNTS} service accounts`,
  true,
);
export const PrincipalNotFound = wireError('PrincipalNotFound', 404, 'Principal not found', true);

/** A change's `If-Match` names another revision than the account's (http/precondition.ts of @plant/shared). */
export const PreconditionFailed = wireError(
  'PreconditionFailed',
  412,
  'The resource changed since the ETag you sent: read it again, then retry',
  true,
);
export const InvalidIfMatch = wireError(
  'InvalidIfMatch',
  400,
  'If-Match must be * or a list of entity tags',
  true,
);

/** Internal: the name is taken (unique violation); service-accounts.ts answers `ServiceAccountNameTaken`. */
export class DuplicateServiceAccountName extends Error {}

/** Internal: thrown inside a transaction to roll it back when the account vanished under the lock (it cannot: kept as a guard; account-change.ts). */
export class NoLiveAccount extends Error {}

// --- credentials/: keys, trusts, secrets — wire (JSON) ---

export const InvalidPublicKey = wireError(
  'InvalidPublicKey',
  400,
  'The public key is not valid',
  true,
);
export const InvalidTrust = wireError('InvalidTrust', 400, 'The trust is not valid', true);
export const KeyNotFound = wireError('KeyNotFound', 404, 'Key not found', true);
export const TrustNotFound = wireError('TrustNotFound', 404, 'Trust not found', true);
export const KeyLimitReached = wireError(
  'KeyLimitReached',
  409,
  `This service account already has the maximum of ${MAX_KEYS_PER_SERVICE_ACCOUNT} keys`,
  true,
);
export const DuplicateKey = wireError(
  'DuplicateKey',
  409,
  'This service account already has this key (or a key with this id)',
  true,
);
export const TrustLimitReached = wireError(
  'TrustLimitReached',
  409,
  `This service account already has the maximum of ${MAX_TRUSTS_PER_SERVICE_ACCOUNT} trusts`,
  true,
);
export const TrustedIssuerLimitReached = wireError(
  'TrustedIssuerLimitReached',
  409,
  'This tenant already trusts the maximum number of issuers',
  true,
);
export const DuplicateTrust = wireError(
  'DuplicateTrust',
  409,
  'This service account already has this trust',
  true,
);
export const SecretStillNeeded = wireError(
  'SecretStillNeeded',
  409,
  "The secret is this service account's only credential: add a key or a trust before removing it",
  true,
);
export const SecretNotFound = wireError('SecretNotFound', 404, 'Secret not found', true);
export const SecretLimitReached = wireError(
  'SecretLimitReached',
  409,
  'This service account already has two live secrets: remove one before adding another',
  true,
);
export const InvalidSecretExpiry = wireError(
  'InvalidSecretExpiry',
  400,
  'expires_at must be an instant in the future, at most 730 days from now',
  true,
);
export const NoSecret = wireError(
  'NoSecret',
  409,
  'This service account has no secret; Reset Secret gives it one',
  true,
);

// --- client-auth/: who the client is — wire (JSON and, translated, token endpoint) and internal ---

const TooManyFailedAuthenticationsBase = wireError(
  'TooManyFailedAuthentications',
  429,
  'too many failed client authentications; retry later',
  true,
);

/**
 * Wire (JSON): a source (or a client) over its budget of failed client authentications. At the
 * token endpoint, `asOidcError` (grants/service-account-clients.ts) answers it as `TooManyRequests`.
 */
export class TooManyFailedAuthentications extends TooManyFailedAuthenticationsBase {
  constructor(readonly retryAfterSeconds: number) {
    super(undefined, { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

/**
 * Internal: the presented secret is the account's, but older than the tenant's maximum secret
 * age. `asOidcError` answers it as `SecretExpiredRefusal`, whose description is this message.
 */
export class SecretExpired extends Error {
  constructor(readonly expiredAt: Date) {
    super(`the client secret expired at ${expiredAt.toISOString()}; reset it to get a new one`);
    this.name = 'SecretExpired';
  }
}

/**
 * Internal: the assertion does not authenticate the client. `counted`: a failure the throttle
 * counts (a wrong or replayed assertion); not counted when the check itself could not be made (a
 * trusted issuer's keys unavailable), which is no guess by the client. `reason` is for logs and
 * tests; the client is told only what RFC 6749 says (`invalid_client`, `AssertionRefused`).
 */
export class AssertionRejected extends Error {
  constructor(
    readonly reason: string,
    readonly counted = true,
  ) {
    super(reason);
    this.name = 'AssertionRejected';
  }
}

/** Internal: the jti could not be recorded (Redis unavailable): the assertion is refused, since it could be replayed (fail closed; `AssertionUnverifiable`). */
export class AssertionCheckUnavailable extends Error {}

/** Internal: a fetch refused or failed; `message` says why, for the operator's log (never shown to the client). */
export class IssuerFetchFailed extends Error {}

/** Internal: a trusted issuer's keys could not be had (fetch refused or failed, documents malformed); `message` is for the operator's log. */
export class IssuerKeysUnavailable extends Error {}

// --- quotas/ — internal ---

/** Internal: the service account is over its grant quota (enforce mode); `asOidcError` answers 429 `TooManyRequests` with Retry-After. */
export class GrantQuotaExceeded extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    perMinute: number,
  ) {
    super(`the service account is over its quota of ${perMinute} grants per minute; retry later`);
    this.name = 'GrantQuotaExceeded';
  }
}

// --- grants/: the token endpoint's refusals — wire (token endpoint, oidc-provider errors) ---

/** Wire: 429 `too_many_requests` in the token endpoint's own error format; exposed (description shown). */
export class TooManyRequests extends errors.OIDCProviderError {
  constructor(description: string) {
    super(429, 'too_many_requests');
    this.error_description = description;
  }
}

/**
 * Wire: the assertion's jti could not be recorded, so it is refused rather than risk a replay:
 * a dependency unavailable. Not exposed (503): realm-provider.ts answers 503
 * `temporarily_unavailable`; the message goes to the log only.
 */
export class AssertionUnverifiable extends errors.OIDCProviderError {
  constructor(why: Error) {
    super(503, 'temporarily_unavailable');
    this.message = why.message;
  }
}

/** Wire: 401 `invalid_client`, a refused assertion: the domain counted it already (the `grant.error` listener must not count it as an unknown client). */
export class AssertionRefused extends errors.InvalidClientAuth {
  constructor(counted: boolean) {
    super();
    // What the workload's operator needs when the check could not be made; a wrong assertion learns nothing more than invalid_client.
    if (!counted) this.error_description = "the trusted issuer's keys are unavailable";
  }
}

/** Wire: 401 `invalid_client`, the right secret past the tenant's maximum age, saying why (the owner must reset it). */
export class SecretExpiredRefusal extends errors.InvalidClientAuth {
  constructor(why: SecretExpired) {
    super();
    this.error_description = why.message;
  }
}

// --- token-exchange/: token exchange's refusals — wire (token endpoint, oidc-provider errors) ---

/** The RFC 8693 §2.2.2 and RFC 6749 §5.2 codes a token exchange is refused with. */
export type ExchangeRefusalCode =
  | 'invalid_request'
  | 'invalid_target'
  | 'invalid_scope'
  | 'unauthorized_client';

/** Wire: 400 with the RFC's code and a description that names no token content; exposed. */
export class ExchangeRefused extends errors.OIDCProviderError {
  constructor(code: ExchangeRefusalCode, description: string) {
    super(400, code);
    this.error_description = description;
  }
}

/**
 * Internal: a trusted workload's platform token presented as an exchange's subject names no
 * account of the realm, or does not verify (`reason`, for tests and debugging); the exchange
 * answers `invalid_request` without saying which.
 */
export class WorkloadTokenRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'WorkloadTokenRefused';
  }
}

// --- oidc/: the oidc-provider boundary — internal ---

/** Internal: a payload still holding its row's id after scrubbing: refused rather than stored in clear (payload-scrubbing.ts). */
export class PayloadHoldsItsId extends Error {
  constructor(model: string) {
    super(`refusing to store a ${model} payload that holds its own id`);
  }
}

/** Internal: a replay check that could not be made: the grant is answered 503, never let through (realm-provider.ts). */
export class ReplayCheckUnavailable extends Error {
  constructor(cause: unknown) {
    super('the replay store is unavailable', { cause });
    this.name = 'ReplayCheckUnavailable';
  }
}

// --- people/: users and invitations — wire (JSON) and internal ---

export const UserNotFound = wireError('UserNotFound', 404, 'User not found', true);
export const UserEmailTaken = wireError(
  'UserEmailTaken',
  409,
  'A user with this email already exists',
  true,
);
export const LastAccountAdmin = wireError(
  'LastAccountAdmin',
  409,
  'This is the last active Account Admin of the tenant: make another person Account Admin first',
  true,
);
export const InvitationNotFound = wireError(
  'InvitationNotFound',
  404,
  'Invitation not found',
  true,
);
export const InvitationLimitReached = wireError(
  'InvitationLimitReached',
  409,
  `This tenant already has the maximum of ${MAX_PENDING_INVITATIONS} pending invitations: revoke one, or wait until one is accepted or expires`,
  true,
);

/** Internal: the email is a live person's (unique violation); users.ts and tenants.ts answer `UserEmailTaken`, an invitation's acceptance rolls back as 'email-taken'. */
export class DuplicateUserEmail extends Error {}

/**
 * Internal: thrown inside a transaction to roll it back, carrying the outcome to answer (an
 * invitation's acceptance, invitation-repository.ts, which throws and catches it, so knows the
 * outcome's type: the catalogue names no wing's types).
 */
export class RollBack extends Error {
  constructor(readonly outcome: { kind: string }) {
    super(outcome.kind);
  }
}

// --- second-factors/ — wire (JSON) and internal ---

export const FactorNotFound = wireError('FactorNotFound', 404, 'Factor not found', true);

/** Internal: the person holds this factor already (unique violation); second-factors.ts and passkeys.ts answer it as an outcome. */
export class DuplicateFactor extends Error {}

/** Internal: a factor was taken away from the person since the sign-in that enrols began: it must start again (sign-in-steps.ts). */
export class StaleFactorGeneration extends Error {}

// --- leak-reports/: secret scanning — wire (JSON) and internal ---

export const InvalidReportSignature = wireError(
  'InvalidReportSignature',
  401,
  'The report signature is not valid',
  true,
);
export const SecretScanningOff = wireError(
  'SecretScanningOff',
  404,
  'Secret scanning reports are not accepted here',
  true,
);

/** Internal: the scanner's verification keys could not be fetched; secret-scanning-route.ts answers 503 `ServiceUnavailable`. */
export class KeysUnavailable extends Error {}

// --- signals/: Shared Signals streams — wire (JSON) ---

export const StreamNotFound = wireError('StreamNotFound', 404, 'Stream not found', true);
export const StreamLimitReached = wireError(
  'StreamLimitReached',
  409,
  "The tenant's stream limit is reached",
  true,
);
export const SubjectLimitReached = wireError(
  'SubjectLimitReached',
  409,
  'The stream holds the most subjects it may',
  true,
);
export const VerificationTooSoon = wireError(
  'VerificationTooSoon',
  429,
  'Verification was requested too recently (min_verification_interval)',
  true,
);
export const BacklogFull = wireError('BacklogFull', 409, "The stream's backlog is full", true);

// --- cli.ts — internal (printed to the operator's terminal) ---

/** Internal: a command line the CLI cannot run; cli.ts prints `error: <message>` and exits 2. */
export class UsageError extends Error {}
