/**
 * The platform wing. Owns what every wing shares: the error catalogue, the identity context
 * (the parts a use case is handed), internal authentication and route helpers, the `{actor}`
 * body, optional JSON bodies, the wording of a throttle's wait. The apps that mount every wing are composition roots
 * (src/internal-app.ts, src/public-app.ts, src/internal-routes.ts).
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: credentials, revocation, signing-keys
 */
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
  ExchangeRefused,
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
  SecretNotFound,
  SecretLimitReached,
  InvalidSecretExpiry,
  ServiceAccountLimitReached,
  ServiceAccountNameTaken,
  ServiceAccountNotFound,
  PreconditionFailed,
  InvalidIfMatch,
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
  WorkloadTokenRefused,
} from './errors.js';
export { Actor, ActorBodySchema } from './actor-body.js';
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
export { waitWording } from './wait-wording.js';
export type { RedisConnections } from './redis-connections.js';
