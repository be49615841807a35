/** The handlers of Settings → Security and Settings → Policy (paths in http/portal-routes.ts, behind a session). */
import type { Request, Response } from 'express';
import { sendPage } from '../portal/index.js';
import { actorFromSession } from '../sessions/index.js';
import { getPeopleSettings, listMyFactors, type FactorDeps } from './managed-factors.js';
import { policyPage } from './policy-page.js';
import { securityPage } from './security-pages.js';

/** The person's own factors (`deps` reads their counts). */
export function securityPageHandler(deps: FactorDeps) {
  return async function security(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const factors = await listMyFactors(deps, actorFromSession(session));
    sendPage(res, 200, securityPage({ session, factors }));
  };
}

/** Account Admins only (getPeopleSettings refuses anyone else: the error page says so). */
export function policyPageHandler(deps: FactorDeps) {
  return async function policy(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const settings = await getPeopleSettings(deps, actorFromSession(session));
    sendPage(res, 200, policyPage({ session, settings }));
  };
}
