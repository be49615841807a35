// ---- public surface (generated from what other wings import) ----
export { actorLabel, assertCanManage, assertCanManagePeople, canManage } from './actor.js';
export type { Actor, RequestMeta, Role } from './actor.js';
export {
  AuditUnavailable,
  CsrfRejected,
  FACTOR_ACR,
  InvitationNotFound,
  NotAPerson,
  NotAccountAdmin,
  NotPeopleAdmin,
  NotSignedIn,
  PersonNotFound,
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
export { unknownFieldMessage } from './validation.js';
