/** The handler of Settings → Sessions (its path is in http/portal-routes.ts, behind a session). */
import type { Request, Response } from 'express';
import { sendPage } from '../portal/index.js';
import { actorFromSession, listOwnSessions, type SessionStore } from './portal-sessions.js';
import { sessionsPage } from './session-pages.js';

export function sessionsPageHandler(store: SessionStore) {
  return async function ownSessions(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const list = await listOwnSessions(store, actorFromSession(session), session.handle);
    sendPage(res, 200, sessionsPage({ session, sessions: list }));
  };
}
