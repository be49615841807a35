// ---- public surface (generated from what other wings import) ----
export { registerCredentialOperations } from './credential-operations.js';
export { credentialRoutes } from './credential-routes.js';
export { listServiceAccounts } from './managed-service-accounts.js';
export type { ServiceAccountDeps } from './managed-service-accounts.js';
export { registerServiceAccountOperations } from './service-account-operations.js';
export {
  accountCredentialsPageHandler,
  serviceAccountsPageHandler,
} from './service-account-page-routes.js';
export { serviceAccountRoutes } from './service-account-routes.js';
