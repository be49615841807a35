// ---- public surface (generated from what other wings import) ----
export { createOidcClients } from './oidc-clients.js';
export type { OidcClients } from './oidc-clients.js';
export { safeReturnTo } from './return-to.js';
export { signInRoutes } from './sign-in-routes.js';
export { tenantPickerHandler } from './tenant-picker-route.js';
