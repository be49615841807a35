// ---- public surface (generated from what other wings import) ----
export { registerCredentialOperations } from './credential-operations.js';
export { credentialsPage } from './credential-pages.js';
export { credentialRoutes } from './credential-routes.js';
export {
  getServiceAccount,
  getServiceAccountCredentials,
  listServiceAccounts,
} from './managed-service-accounts.js';
export type { ServiceAccountDeps } from './managed-service-accounts.js';
export { registerServiceAccountOperations } from './service-account-operations.js';
export { serviceAccountRoutes } from './service-account-routes.js';
export { serviceAccountsPage } from './service-accounts-page.js';
