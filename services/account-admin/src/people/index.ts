/**
 * The `people` wing's public module: other wings import it from here only.
 *
 * People and invitations: use cases, validators, API routes, OpenAPI operations and schemas,
 * the People page, and the SMTP mailer that sends invitations.
 *
 * May call: platform, audit, portal, sessions.
 */
// What other wings use:
export { registerPeopleOperations } from './people-operations.js';
export { peoplePageHandler } from './people-page-routes.js';
export { peopleRoutes } from './people-routes.js';
export type { PeopleDeps } from './people.js';
export { createSmtpMailer } from './smtp-mailer.js';
