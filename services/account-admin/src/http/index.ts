/**
 * The `http` wing's public module: other wings import it from here only.
 *
 * The assembly of the public listener: the Express app (server.ts), the API route table (api-
 * routes.ts, with /me), the page route table (portal-routes.ts, with the Activity page handler),
 * the OpenAPI document, and plantctl's discovery (plantctl-configuration.ts). Only the
 * composition root (account-admin.ts) and tests import it.
 *
 * May call: platform, audit, credential-policy, people, portal, second-factors, service-accounts, sessions, sign-in.
 */
// What other wings use:
export { createApp } from './server.js';
