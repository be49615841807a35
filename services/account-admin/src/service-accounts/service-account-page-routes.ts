/** The handlers of the wing's portal pages (their paths are in http/portal-routes.ts, behind a session). */
import type { Request, Response } from 'express';
import { getCredentialPolicy } from '../credential-policy/index.js';
import { canManage } from '../platform/index.js';
import { sendPage } from '../portal/index.js';
import { actorFromSession } from '../sessions/index.js';
import { credentialsPage } from './credential-pages.js';
import { getDelegations } from './managed-delegations.js';
import { getServiceAccountCredentials } from './managed-credentials.js';
import {
  getServiceAccount,
  listServiceAccounts,
  type ServiceAccountDeps,
} from './managed-service-accounts.js';
import { serviceAccountsPage } from './service-accounts-page.js';

/** Settings → Service accounts. */
export function serviceAccountsPageHandler(accounts: ServiceAccountDeps) {
  return async function serviceAccounts(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const actor = actorFromSession(session);
    const list = await listServiceAccounts(accounts, actor);
    sendPage(
      res,
      200,
      serviceAccountsPage({ session, accounts: list, canManage: canManage(actor) }),
    );
  };
}

/** An account's own page: its credentials (`authUrl`: a realm's issuer is what assertions name as audience). */
export function accountCredentialsPageHandler(accounts: ServiceAccountDeps, authUrl: string) {
  return async function accountCredentials(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const actor = actorFromSession(session);
    const clientId = String(req.params.client_id);
    const [account, credentials, policy, delegations] = await Promise.all([
      getServiceAccount(accounts, actor, clientId),
      getServiceAccountCredentials(accounts, actor, clientId),
      getCredentialPolicy(accounts, actor),
      getDelegations(accounts, actor, clientId),
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
        delegations,
      }),
    );
  };
}
