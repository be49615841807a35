/**
 * The `platform` wing's public module: other wings import it from here only.
 *
 * What every wing shares and no business capability owns: the error catalogue (errors.ts), who
 * is asking and the role rules (actor.ts), the recent-second-factor rule and the table of the
 * sensitive actions that ask for it (step-up.ts), request helpers (`actorOf`, `requestMeta`,
 * `noStore`), `ETag` / `If-Match` (etag.ts), edge-validation helpers and the OpenAPI
 * error-response shape.
 *
 * May call: nothing
 */
// What other wings use:
export { actorLabel, assertCanManage, assertCanManagePeople, canManage } from './actor.js';
export type { Actor, RequestMeta, Role } from './actor.js';
export {
  AuditUnavailable,
  CsrfRejected,
  FACTOR_ACR,
  InvalidIfMatch,
  InvitationNotFound,
  NotAPerson,
  NotAccountAdmin,
  NoFactorsToReset,
  NotPeopleAdmin,
  NotSignedIn,
  PersonNotFound,
  PreconditionFailed,
  ServiceAccountNotFound,
  SessionNotFound,
  SessionStoreUnavailable,
  TokenServiceUnavailable,
  UserNotFound,
  toAdminError,
} from './errors.js';
export type { OperationErrors } from './operation-errors.js';
export { actorOf, clientIdOf, noStore, requestMeta } from './route-helpers.js';
export { assertRecentFactor, hasSecondFactor } from './step-up.js';
export { conditional, etagged, withoutRevision } from './etag.js';
export { unknownFieldMessage } from './validation.js';
