/**
 * The credentials wing. Owns: a service account's credentials: secrets (generation, HMAC digests,
 * expiry), public keys and federation trusts, the credential cache and the feed of its changes,
 * usage recording, the realm's credential policy and hygiene (leaks, security events), and their
 * internal routes.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: changes, client-auth, people-audit, platform, realms, revocation, service-accounts
 */
export {
  MAX_LIVE_SECRETS,
  credentialOfSecret,
  insertSecret,
  newSecretId,
  replaceSecrets,
} from './account-secret-repository.js';
export { credentialName } from './credential-names.js';
export type { CredentialKind } from './credential-names.js';
export { createClientCredentialRepository } from './client-credential-repository.js';
export type {
  ClientCredentialRepository,
  ClientCredentialRow,
  CredentialKey,
  CredentialSecret,
  CredentialTrust,
} from './client-credentials.js';
export {
  createClientSecretDigester,
  generateClientSecret,
  isWellFormedClientSecret,
} from './client-secrets.js';
export type { ClientSecretDigester } from './client-secrets.js';
export { createCredentialHygieneRepository } from './credential-hygiene-repository.js';
export type {
  CredentialAuditEvent,
  CredentialHygieneRepository,
  LeakRow,
} from './credential-hygiene-repository.js';
export { createCredentialUsageRepository } from './credential-usage-repository.js';
export type { CredentialUsageRepository } from './credential-usage-repository.js';
export { CredentialChangeFollower } from './follow-credential-changes.js';
export { credentialRoutes } from './internal-credential-routes.js';
export { THUMBPRINT_MEMBERS, keyObjectOf, thumbprintOf } from './public-keys.js';
export { isSecretExpired, secretDeadline, secretExpiresAt } from './secret-expiry.js';
export { createServiceAccountCredentialRepository } from './service-account-credential-repository.js';
export type {
  AccountCredentialsRow,
  AccountKeyRow,
  AccountSecretRow,
  AccountTrustRow,
  ServiceAccountCredentialRepository,
} from './service-account-credential-repository.js';
export { publishChange } from './service-account-credentials.js';
export type { TrustPolicy } from './service-account-credentials.js';
export { UsageRecorder } from './usage-recorder.js';
