/**
 * The people-audit wing. Owns: the people audit trail's table (`user_security_events`): its one
 * writer, used in the transaction of each change a person's trail shows (a person's, a factor's,
 * a credential policy's or a leak's), and its repository. Low in the graph, so the wings that
 * change people and accounts write it without calling each other; the trail's reader and route
 * are people's (people-audit.ts).
 *
 * Other wings import it through this module only.
 *
 * May call: nothing
 */
export { createPeopleAuditRepository, insertPeopleAuditEvent } from './people-audit-repository.js';
export type {
  NewPeopleAuditEvent,
  PeopleAuditRepository,
  PeopleAuditRow,
} from './people-audit-repository.js';
export {
  insertSignInEvent,
  SIGN_IN_ACTION,
  SIGN_IN_EVENTS_PER_PERSON,
  SIGN_IN_EXPIRED_PER_WRITE,
  SIGN_IN_RETENTION_DAYS,
} from './sign-in-event-repository.js';
export type { SignInEvent } from './sign-in-event-repository.js';
