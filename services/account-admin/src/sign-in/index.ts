// ---- public surface (generated from what other wings import) ----
export { createOidcClients } from './oidc-clients.js';
export type { OidcClients } from './oidc-clients.js';
export { safeReturnTo } from './return-to.js';
export { tenantPickerPage } from './sign-in-pages.js';
export { signInRoutes } from './sign-in-routes.js';
