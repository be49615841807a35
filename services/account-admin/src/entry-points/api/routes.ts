import { jsonBody, methodNotAllowed, requestIdOf } from '@plant/shared';
import { Router, type Request, type Response } from 'express';
import { canManage, type RequestMeta } from '../../domain/actor.js';
import { parseAuditCursor, parseAuditLimit } from '../../domain/audit-event-validators.js';
import { createServiceAccount } from '../../domain/create-service-account.js';
import { deleteServiceAccount } from '../../domain/delete-service-account.js';
import { getServiceAccount } from '../../domain/get-service-account.js';
import { listAuditEvents, type AuditTrail } from '../../domain/list-audit-events.js';
import { listServiceAccounts } from '../../domain/list-service-accounts.js';
import { resetServiceAccountSecret } from '../../domain/reset-service-account-secret.js';
import { CreateServiceAccountBody, UpdateServiceAccountBody } from '../../domain/service-account-validators.js';
import type { ServiceAccountDeps } from '../../domain/service-accounts.js';
import { updateServiceAccount } from '../../domain/update-service-account.js';
import { actorOf } from './authenticate.js';

export interface ApiRoutesDeps {
  accounts: ServiceAccountDeps;
  audit: AuditTrail;
  portalUrl: string;
}

export function requestMeta(req: Request): RequestMeta {
  return { requestId: requestIdOf(req) ?? null, address: req.ip ?? null };
}

function clientIdOf(req: Request): string {
  return String(req.params.client_id);
}

/** Answers that may carry a secret, and management answers, are never cached. */
function noStore(res: Response): Response {
  return res.setHeader('cache-control', 'no-store');
}

/** The REST API under /api/v1 (mounted behind `authenticateApi`). */
export function apiRoutes({ accounts, audit, portalUrl }: ApiRoutesDeps): Router {
  const router = Router();

  router
    .route('/me')
    .get((req, res) => {
      const actor = actorOf(req);
      noStore(res).json({
        tenant: actor.tenant,
        sub: actor.sub,
        email: actor.email,
        principal_type: actor.type,
        role: actor.role,
        can_manage_service_accounts: canManage(actor),
      });
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/service-accounts')
    .get(async (req, res) => {
      noStore(res).json(await listServiceAccounts(accounts, actorOf(req)));
    })
    .post(jsonBody(), async (req, res) => {
      const input = CreateServiceAccountBody.parse(req.body);
      const created = await createServiceAccount(accounts, actorOf(req), requestMeta(req), input);
      noStore(res)
        .status(201)
        .setHeader('location', `/api/v1/service-accounts/${encodeURIComponent(created.client_id)}`)
        .json(created);
    })
    .all(methodNotAllowed(['GET', 'HEAD', 'POST']));

  router
    .route('/service-accounts/:client_id')
    .get(async (req, res) => {
      noStore(res).json(await getServiceAccount(accounts, actorOf(req), clientIdOf(req)));
    })
    .patch(jsonBody(), async (req, res) => {
      const input = UpdateServiceAccountBody.parse(req.body);
      noStore(res).json(await updateServiceAccount(accounts, actorOf(req), requestMeta(req), clientIdOf(req), input));
    })
    .delete(async (req, res) => {
      await deleteServiceAccount(accounts, actorOf(req), requestMeta(req), clientIdOf(req));
      noStore(res).status(204).end();
    })
    .all(methodNotAllowed(['GET', 'HEAD', 'PATCH', 'DELETE']));

  router
    .route('/service-accounts/:client_id/reset-secret')
    .post(async (req, res) => {
      noStore(res).json(await resetServiceAccountSecret(accounts, actorOf(req), requestMeta(req), clientIdOf(req)));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/audit-events')
    .get(async (req, res) => {
      const limit = parseAuditLimit(req.query.limit);
      const before = parseAuditCursor(req.query.cursor);
      const page = await listAuditEvents(audit, actorOf(req), limit, before);
      if (page.nextCursor !== undefined) {
        const next = `${portalUrl.replace(/\/+$/, '')}/api/v1/audit-events?limit=${limit}&cursor=${page.nextCursor}`;
        res.setHeader('link', `<${next}>; rel="next"`);
      }
      noStore(res).json(page.events);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  return router;
}
