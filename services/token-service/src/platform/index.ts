/**
 * The platform wing. Owns: what every wing shares and what serves them: errors, the identity
 * context, internal authentication and route helpers, optional JSON bodies, the internal and
 * public express apps, the joined internal route table, and the service gauges. It mounts every
 * wing's routes, hence its long May call list.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: client-auth, credentials, grants, leak-reports, oidc, people, realms, revocation, second-factors, service-accounts, sign-in, signals, signing-keys
 */
export { keyChangeAnnouncer, subscribeToChanges } from './../change-subscriptions.js';
export { createInternalApp } from './../internal-app.js';
export {
  AssertionCheckUnavailable,
  AssertionRefused,
  AssertionRejected,
  AssertionUnverifiable,
  BacklogFull,
  DuplicateFactor,
  DuplicateKey,
  DuplicateServiceAccountName,
  DuplicateTrust,
  DuplicateUserEmail,
  FactorNotFound,
  GrantQuotaExceeded,
  InvalidPublicKey,
  InvalidReportSignature,
  InvalidTrust,
  InvitationLimitReached,
  InvitationNotFound,
  IssuerFetchFailed,
  IssuerKeysUnavailable,
  KeyLimitReached,
  KeyNotFound,
  KeysUnavailable,
  LastAccountAdmin,
  NoLiveAccount,
  NoSecret,
  PayloadHoldsItsId,
  PrincipalNotFound,
  RealmExists,
  ReplayCheckUnavailable,
  RollBack,
  SecretExpired,
  SecretExpiredRefusal,
  SecretScanningOff,
  SecretStillNeeded,
  ServiceAccountLimitReached,
  ServiceAccountNameTaken,
  ServiceAccountNotFound,
  StaleFactorGeneration,
  StreamLimitReached,
  StreamNotFound,
  SubjectLimitReached,
  TenantExists,
  TenantNotFound,
  TooManyFailedAuthentications,
  TooManyRequests,
  TrustLimitReached,
  TrustNotFound,
  TrustedIssuerLimitReached,
  UsageError,
  UserEmailTaken,
  UserNotFound,
  VerificationTooSoon,
} from './errors.js';
export type { IdentityContext } from './identity-context.js';
export { authenticateInternalCaller, requireInternalScope } from './internal-auth.js';
export type { InternalCredentials } from './internal-auth.js';
export {
  REPORT_INPUT,
  accountActionRoute,
  idOf,
  noStore,
  tenantOf,
} from './internal-route-helpers.js';
export type { InternalRoute } from './internal-route-helpers.js';
export { optionalJsonBody } from './optional-json-body.js';
export { createRedisConnections } from './redis-connections.js';
export type { RedisConnections } from './redis-connections.js';
export { createPublicApp } from './../public-app.js';
export { registerServiceGauges } from './../service-gauges.js';
