/**
 * The platform wing. Owns: what every wing shares and what serves them: errors, the identity
 * context, internal authentication and route helpers, optional JSON bodies, the internal and
 * public express apps, the joined internal route table, and the service gauges. It mounts every
 * wing's routes, hence its long May call list.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: credentials, grants, leak-reports, oidc, people, realms, revocation, second-factors, service-accounts, sign-in, signals, signing-keys
 */
export {
  DuplicateKey,
  DuplicateTrust,
  FactorNotFound,
  GrantQuotaExceeded,
  InvalidPublicKey,
  InvalidReportSignature,
  InvalidTrust,
  InvitationLimitReached,
  InvitationNotFound,
  KeyLimitReached,
  KeyNotFound,
  LastAccountAdmin,
  NoSecret,
  PrincipalNotFound,
  SecretExpired,
  SecretScanningOff,
  SecretStillNeeded,
  ServiceAccountLimitReached,
  ServiceAccountNameTaken,
  ServiceAccountNotFound,
  TenantExists,
  TenantNotFound,
  TooManyFailedAuthentications,
  TrustLimitReached,
  TrustNotFound,
  TrustedIssuerLimitReached,
  UserEmailTaken,
  UserNotFound,
} from './errors.js';
export type { IdentityContext } from './identity-context.js';
export { createInternalApp } from './internal-app.js';
export {
  REPORT_INPUT,
  accountActionRoute,
  idOf,
  noStore,
  tenantOf,
} from './internal-route-helpers.js';
export type { InternalRoute } from './internal-route-helpers.js';
export { optionalJsonBody } from './optional-json-body.js';
export { createPublicApp } from './public-app.js';
export { registerServiceGauges } from './service-gauges.js';
