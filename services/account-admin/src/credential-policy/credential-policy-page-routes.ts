/**
 * The handler of Settings → Credentials (its path is in http/portal-routes.ts, behind a
 * session). The page lists the tenant's accounts, which it is given as `listAccounts`: the
 * service-accounts wing builds on this one, never the other way round.
 */
import type { ServiceAccount } from '@plant/shared/token-service-client';
import type { Request, Response } from 'express';
import type { ManagementDeps } from '../audit/index.js';
import { canManage, type Actor } from '../platform/index.js';
import { sendPage } from '../portal/index.js';
import { actorFromSession } from '../sessions/index.js';
import { getCredentialPolicy } from './credential-policy.js';
import { credentialPolicyPage } from './credential-policy-page.js';

export function credentialSettingsPageHandler(
  deps: ManagementDeps,
  listAccounts: (actor: Actor) => Promise<ServiceAccount[]>,
) {
  return async function credentialSettings(req: Request, res: Response): Promise<void> {
    const session = req.portalSession!;
    const actor = actorFromSession(session);
    const [policy, list] = await Promise.all([
      getCredentialPolicy(deps, actor),
      listAccounts(actor),
    ]);
    sendPage(
      res,
      200,
      credentialPolicyPage({ session, policy, accounts: list, canManage: canManage(actor) }),
    );
  };
}
