/** The portal's pages: tenant picker, Settings → Service accounts, Credentials, People, Sessions, Security, Policy, Activity. Server-rendered; each wing owns its pages' handlers. */
import type { Route } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import type { NextFunction, Request, Response } from 'express';
import type { AuditTrail } from '../audit/index.js';
import { credentialSettingsPageHandler } from '../credential-policy/index.js';
import { peoplePageHandler, type PeopleDeps } from '../people/index.js';
import { pageRoutes } from '../portal/index.js';
import { activityPageHandler } from './activity-page-route.js';
import { policyPageHandler, securityPageHandler } from '../second-factors/index.js';
import {
  accountCredentialsPageHandler,
  listServiceAccounts,
  serviceAccountsPageHandler,
  type ServiceAccountDeps,
} from '../service-accounts/index.js';
import { sessionsPageHandler, type PortalSessions, type SessionStore } from '../sessions/index.js';
import { safeReturnTo, tenantPickerHandler } from '../sign-in/index.js';

export interface PortalDeps {
  accounts: ServiceAccountDeps;
  people: PeopleDeps;
  audit: AuditTrail;
  sessions: PortalSessions;
  store: SessionStore;
  /** Reads the person's factor counts for the Security page. */
  logger: Logger;
  /** The token service's public base URL: a realm's issuer is what assertions name as audience. */
  authUrl: string;
}

export function portalRoutes({
  accounts,
  people,
  audit,
  sessions,
  store,
  logger,
  authUrl,
}: PortalDeps): Route[] {
  const page = pageRoutes(logger);

  /** Signed-out visitors go to the tenant picker and come back here after sign-in. */
  async function requireSession(req: Request, res: Response, next: NextFunction): Promise<void> {
    const loaded = await sessions.load(req);
    if (!loaded) {
      res.redirect(303, `/?return_to=${encodeURIComponent(safeReturnTo(req.originalUrl))}`);
      return;
    }
    req.portalSession = loaded.session;
    next();
  }

  const listAccounts = (actor: Parameters<typeof listServiceAccounts>[1]) =>
    listServiceAccounts(accounts, actor);
  return [
    page('/', [tenantPickerHandler(sessions)], ['return_to']),
    page('/settings', [(_req, res) => res.redirect(303, '/settings/service-accounts')]),
    page('/settings/service-accounts', [requireSession, serviceAccountsPageHandler(accounts)]),
    page('/settings/service-accounts/:client_id', [
      requireSession,
      accountCredentialsPageHandler(accounts, authUrl),
    ]),
    page('/settings/credentials', [
      requireSession,
      credentialSettingsPageHandler(accounts, listAccounts),
    ]),
    page('/settings/people', [requireSession, peoplePageHandler(people)]),
    page('/activity', [requireSession, activityPageHandler(audit)], ['cursor']),
    page('/settings/sessions', [requireSession, sessionsPageHandler(store)]),
    page('/settings/security', [requireSession, securityPageHandler(accounts)]),
    page('/settings/policy', [requireSession, policyPageHandler(accounts)]),
  ];
}
