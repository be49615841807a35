// ---- public surface (generated from what other wings import) ----
export { registerFactorOperations } from './factor-operations.js';
export { policyPageHandler, securityPageHandler } from './factor-page-routes.js';
export { factorRoutes } from './factor-routes.js';
