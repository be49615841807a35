/**
 * The `sign-in` wing's public module: other wings import it from here only.
 *
 * Sign-in, step-up and sign-out at the tenant's realm (OpenID Connect code + PKCE): the flows
 * as pipelines of named steps, the OIDC clients, `safeReturnTo`, the tenant picker and sign-out
 * pages.
 *
 * May call: platform, portal, sessions.
 */
// What other wings use:
export { createOidcClients } from './oidc-clients.js';
export type { OidcClients } from './oidc-clients.js';
export { safeReturnTo } from './return-to.js';
export { signInRoutes } from './sign-in-routes.js';
export { tenantPickerHandler } from './tenant-picker-route.js';
