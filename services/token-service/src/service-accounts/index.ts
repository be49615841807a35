/**
 * The service-accounts wing. Owns: service accounts: their use cases, views and repositories, a
 * change to one with its signals, the validators of the internal API's bodies, and their internal
 * routes.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: changes, credentials, platform, realms, signal-outbox
 */
export { changeAccount } from './account-change.js';
export { serviceAccountRoutes } from './internal-service-account-routes.js';
export {
  bumpTokenVersion,
  createPrincipalRepository,
  findLiveEntry,
  insertPrincipal,
  revokeCredentials,
} from './principal-repository.js';
export type { PrincipalRepository } from './principal-repository.js';
export {
  AddKeySchema,
  AddSecretSchema,
  AddTrustSchema,
  CreateInvitationSchema,
  EmailSchema,
  FactorPolicySchema,
  PasswordSchema,
  SetQuotaSchema,
  TenantNameSchema,
  UpdateCredentialPolicySchema,
  UpdateUserSchema,
  UserRoleSchema,
} from './principal-validators.js';
export { resetServiceAccountSecret } from './reset-secret.js';
export { RealmClientIds } from './realm-client-id-repository.js';
export { GRANTS_JSON, createServiceAccountRepository } from './service-account-repository.js';
export type { ServiceAccountRepository } from './service-account-repository.js';
export {
  toServiceAccountCredentials,
  toServiceAccountKey,
  toServiceAccountSecret,
  toServiceAccountTrust,
} from './service-account-view.js';
export { getServiceAccount, setServiceAccountDisabled } from './service-accounts.js';
