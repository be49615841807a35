/**
 * The people wing. Owns: the people of a realm: users, invitations (their pages and routes), the
 * people audit trail's reader (its table and writer are people-audit's), and their internal
 * routes.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: changes, oidc, passwords, people-audit, platform, realms, service-accounts
 */
export { peopleRoutes, signOutEverywhereRoute } from './internal-people-routes.js';
export { createInvitationRepository } from './invitation-repository.js';
export type { AcceptOutcome, InvitationRepository } from './invitation-repository.js';
export { invitationRoutes } from './invitation-routes.js';
export type { InvitationPageDeps } from './invitation-routes.js';
export type { InvitationSettings } from './invitations.js';
export { applyPersonChange, createUserRepository, insertUser } from './user-repository.js';
export type {
  NewUser,
  PersonChangeEvent,
  SignInCredentialRow,
  UserRepository,
} from './user-repository.js';
export { createUser } from './users.js';
export type { CreatedUser } from './users.js';
