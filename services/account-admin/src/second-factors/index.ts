/**
 * The `second-factors` wing's public module: other wings import it from here only.
 *
 * Second factors: a person's own factors, an admin's reset of someone's, the tenant's people
 * policy (factor requirement); use cases, validators, API routes and operations, the Security
 * and Policy pages.
 *
 * May call: platform, audit, portal, sessions.
 */
// What other wings use:
export { registerFactorOperations } from './factor-operations.js';
export { policyPageHandler, securityPageHandler } from './factor-page-routes.js';
export { factorRoutes } from './factor-routes.js';
