/** The portal's pages: tenant picker, Settings → Service accounts, Credentials, People, Sessions, Security, Policy, Activity. Server-rendered. */
import type { Route } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import { INVITATION_PAGE_MAX } from '@plant/shared/token-service-client';
import type { NextFunction, Request, Response } from 'express';
import { canManage } from '../platform/index.js';
import {
  parseAuditCursor,
  listAuditEvents,
  type AuditTrail,
  activityPage,
} from '../audit/index.js';
import {
  getServiceAccount,
  getServiceAccountCredentials,
  listServiceAccounts,
  type ServiceAccountDeps,
  credentialsPage,
  serviceAccountsPage,
} from '../service-accounts/index.js';
import {
  getPeopleSettings,
  listMyFactors,
  securityPage,
  policyPage,
} from '../second-factors/index.js';
import {
  actorFromSession,
  listOwnSessions,
  type Session,
  type SessionStore,
  sessionsPage,
  type PortalSessions,
} from '../sessions/index.js';
import { listInvitations, listPeople, type PeopleDeps, peoplePage } from '../people/index.js';
import { pageRoutes, sendPage } from '../portal/index.js';
import { getCredentialPolicy, credentialPolicyPage } from '../credential-policy/index.js';
import { tenantPickerPage, safeReturnTo } from '../sign-in/index.js';

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

const ACTIVITY_PAGE_SIZE = 25;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      portalSession?: Session;
    }
  }
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

  async function ownSessions(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const list = await listOwnSessions(store, actorFromSession(session), session.handle);
    sendPage(res, 200, sessionsPage({ session, sessions: list }));
  }

  async function security(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const factors = await listMyFactors(accounts, actorFromSession(session));
    sendPage(res, 200, securityPage({ session, factors }));
  }

  async function tenantPicker(req: Request, res: Response): Promise<void> {
    const loaded = await sessions.load(req);
    if (loaded) {
      res.redirect(303, '/settings/service-accounts');
      return;
    }
    const returnTo =
      req.query.return_to === undefined ? undefined : safeReturnTo(req.query.return_to);
    sendPage(res, 200, tenantPickerPage(returnTo === undefined ? {} : { returnTo }));
  }

  async function serviceAccounts(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const actor = actorFromSession(session);
    const list = await listServiceAccounts(accounts, actor);
    sendPage(
      res,
      200,
      serviceAccountsPage({ session, accounts: list, canManage: canManage(actor) }),
    );
  }

  async function accountCredentials(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const actor = actorFromSession(session);
    const clientId = String(req.params.client_id);
    const [account, credentials, policy] = await Promise.all([
      getServiceAccount(accounts, actor, clientId),
      getServiceAccountCredentials(accounts, actor, clientId),
      getCredentialPolicy(accounts, actor),
    ]);
    const issuer = `${authUrl.replace(/\/+$/, '')}/realms/${session.tenant}`;
    sendPage(
      res,
      200,
      credentialsPage({
        session,
        account,
        credentials,
        canManage: canManage(actor),
        issuer,
        defaultQuota: policy.default_quota,
      }),
    );
  }

  async function credentialSettings(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const actor = actorFromSession(session);
    const [policy, list] = await Promise.all([
      getCredentialPolicy(accounts, actor),
      listServiceAccounts(accounts, actor),
    ]);
    sendPage(
      res,
      200,
      credentialPolicyPage({ session, policy, accounts: list, canManage: canManage(actor) }),
    );
  }

  async function peopleSettings(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const actor = actorFromSession(session);
    // One page holds the whole bound of pending invitations (MAX_PENDING_INVITATIONS).
    const [list, page] = await Promise.all([
      listPeople(people, actor),
      listInvitations(people, actor, { limit: INVITATION_PAGE_MAX }),
    ]);
    sendPage(res, 200, peoplePage({ session, people: list, invitations: page.invitations }));
  }

  /** Account Admins only (getPeopleSettings refuses anyone else: the error page says so). */
  async function policy(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const settings = await getPeopleSettings(accounts, actorFromSession(session));
    sendPage(res, 200, policyPage({ session, settings }));
  }

  async function activity(req: Request, res: Response): Promise<void> {
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
  }

  return [
    page('/', [tenantPicker], ['return_to']),
    page('/settings', [(_req, res) => res.redirect(303, '/settings/service-accounts')]),
    page('/settings/service-accounts', [requireSession, serviceAccounts]),
    page('/settings/service-accounts/:client_id', [requireSession, accountCredentials]),
    page('/settings/credentials', [requireSession, credentialSettings]),
    page('/settings/people', [requireSession, peopleSettings]),
    page('/activity', [requireSession, activity], ['cursor']),
    page('/settings/sessions', [requireSession, ownSessions]),
    page('/settings/security', [requireSession, security]),
    page('/settings/policy', [requireSession, policy]),
  ];
}
