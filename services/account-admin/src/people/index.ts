// ---- public surface (generated from what other wings import) ----
export { registerPeopleOperations } from './people-operations.js';
export { peoplePageHandler } from './people-page-routes.js';
export { peopleRoutes } from './people-routes.js';
export type { PeopleDeps } from './people.js';
export { createSmtpMailer } from './smtp-mailer.js';
