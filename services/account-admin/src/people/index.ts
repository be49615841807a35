// ---- public surface (generated from what other wings import) ----
export { registerPeopleOperations } from './people-operations.js';
export { peoplePage } from './people-pages.js';
export { peopleRoutes } from './people-routes.js';
export { listInvitations, listPeople } from './people.js';
export type { PeopleDeps } from './people.js';
export { createSmtpMailer } from './smtp-mailer.js';
