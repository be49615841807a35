/**
 * Portal sessions: who signed in, and the role the token service last confirmed. Sessions and
 * pending sign-ins live server-side (data-access/session-store.ts; the browser holds only a
 * random id); the portal reaches them through the use cases beside this file.
 */
import type { Session } from '../data-access/session-store.js';
import type { Actor } from './actor.js';

export type { PendingSignIn, Session, SessionStore } from '../data-access/session-store.js';

export function actorFromSession(session: Session): Actor {
  return { tenant: session.tenant, sub: session.sub, email: session.email, type: 'user', role: session.role, via: 'session' };
}
