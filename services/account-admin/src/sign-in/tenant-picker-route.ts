/**
 * GET /: the tenant picker that starts a sign-in; a signed-in visitor goes to the settings. A
 * browser whose session cookie no longer opens a session (it expired, or was ended elsewhere)
 * is told so, once: the cookie is cleared, and signing in again comes back to `return_to`.
 */
import type { Request, Response } from 'express';
import { sendPage } from '../portal/index.js';
import { readCookies, SESSION_COOKIE, type PortalSessions } from '../sessions/index.js';
import { safeReturnTo } from './return-to.js';
import { tenantPickerPage } from './sign-in-pages.js';

export function tenantPickerHandler(sessions: PortalSessions) {
  return async function tenantPicker(req: Request, res: Response): Promise<void> {
    const loaded = await sessions.load(req);
    if (loaded) {
      res.redirect(303, '/settings/service-accounts');
      return;
    }
    const ended = readCookies(req)[SESSION_COOKIE] !== undefined;
    if (ended) await sessions.end(req, res);
    const returnTo =
      req.query.return_to === undefined ? undefined : safeReturnTo(req.query.return_to);
    sendPage(
      res,
      200,
      tenantPickerPage({ ...(returnTo === undefined ? {} : { returnTo }), ended }),
    );
  };
}
