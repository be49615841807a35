/**
 * The `sessions` wing's public module: other wings import it from here only.
 *
 * Portal sessions: the Redis store, the session model (open, load, confirm, end; pending sign-
 * ins), the session cookie and CSRF, authenticating API requests (bearer token or session), and
 * the person's own sessions (API, page).
 *
 * May call: platform, audit, portal.
 */
// What other wings use:
export { API_REALM, authenticateApi, bearerForbiddenChallenge } from './authenticate.js';
export {
  SIGN_IN_TTL_SECONDS,
  actorFromSession,
  factorStateOf,
  recordStepUp,
  savePendingSignIn,
  sessionVoidedByFactors,
  takePendingSignIn,
} from './portal-sessions.js';
export {
  SESSION_COOKIE,
  SIGNIN_COOKIE,
  bindingHash,
  createPortalSessions,
  randomBinding,
  readCookies,
} from './session-cookies.js';
export type { PortalSessions } from './session-cookies.js';
export { registerSessionOperations } from './session-operations.js';
export { sessionsPageHandler } from './session-page-routes.js';
export { sessionRoutes } from './session-routes.js';
export { createSessionStore } from './session-store.js';
export type { PendingSignIn, Session, SessionStore } from './session-store.js';
