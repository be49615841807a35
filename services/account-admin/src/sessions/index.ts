// ---- public surface (generated from what other wings import) ----
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
