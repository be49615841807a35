// ---- public surface (generated from what other wings import) ----
export { registerFactorOperations } from './factor-operations.js';
export { factorRoutes } from './factor-routes.js';
export { getPeopleSettings, listMyFactors } from './managed-factors.js';
export { policyPage } from './policy-page.js';
export { securityPage } from './security-pages.js';
