/**
 * The handler of the Activity page (behind a session). It lives here, not in audit/, because it
 * needs the session's actor: sessions/ writes the audit trail, so audit/ cannot call sessions/.
 */
import type { Request, Response } from 'express';
import { sendPage } from '../portal/index.js';
import { actorFromSession } from '../sessions/index.js';
import {
  activityPage,
  listAuditEvents,
  parseAuditCursor,
  type AuditTrail,
} from '../audit/index.js';

const ACTIVITY_PAGE_SIZE = 25;

export function activityPageHandler(audit: AuditTrail) {
  return async function activity(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const before = parseAuditCursor(req.query.cursor);
    const page = await listAuditEvents(
      audit,
      actorFromSession(session),
      ACTIVITY_PAGE_SIZE,
      before,
    );
    sendPage(
      res,
      200,
      activityPage({
        session,
        events: page.events,
        nextHref: page.nextCursor === undefined ? undefined : `/activity?cursor=${page.nextCursor}`,
        firstHref: before === undefined ? undefined : '/activity',
      }),
    );
  };
}
