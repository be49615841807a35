/**
 * The `service-accounts` wing's public module: other wings import it from here only.
 *
 * Service accounts, their credentials (secret, keys, trusted workloads, disabled state) and
 * their permissions to act for others (token exchange): use
 * cases, validators, API routes, OpenAPI operations and response schemas, the Service accounts
 * page and an account's own page.
 *
 * May call: platform, audit, portal, sessions, credential-policy.
 */
// What other wings use:
export { registerCredentialOperations } from './credential-operations.js';
export { credentialRoutes } from './credential-routes.js';
export { registerDelegationOperations } from './delegation-operations.js';
export { delegationRoutes } from './delegation-routes.js';
export { listServiceAccounts } from './managed-service-accounts.js';
export type { ServiceAccountDeps } from './managed-service-accounts.js';
export { registerServiceAccountOperations } from './service-account-operations.js';
export {
  accountCredentialsPageHandler,
  serviceAccountsPageHandler,
} from './service-account-page-routes.js';
export { serviceAccountRoutes } from './service-account-routes.js';
