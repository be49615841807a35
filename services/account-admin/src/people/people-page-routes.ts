/** The handler of Settings → People (its path is in http/portal-routes.ts, behind a session). */
import { INVITATION_PAGE_MAX } from '@plant/shared/token-service-client';
import type { Request, Response } from 'express';
import { sendPage } from '../portal/index.js';
import { actorFromSession } from '../sessions/index.js';
import { listInvitations, listPeople, type PeopleDeps } from './people.js';
import { peoplePage } from './people-pages.js';

export function peoplePageHandler(people: PeopleDeps) {
  return async function peopleSettings(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const actor = actorFromSession(session);
    // One page holds the whole bound of pending invitations (MAX_PENDING_INVITATIONS).
    const [list, page] = await Promise.all([
      listPeople(people, actor),
      listInvitations(people, actor, { limit: INVITATION_PAGE_MAX }),
    ]);
    sendPage(res, 200, peoplePage({ session, people: list, invitations: page.invitations }));
  };
}
