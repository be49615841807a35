import { fieldsOf, jsonBody, type RouteTable } from '@plant/shared/http';
import type { TokenServiceClient } from '@plant/shared/token-service-client';
import type { BearerAuth } from '@plant/resource-auth';
import { canManage } from '../platform/actor.js';
import {
  AuditEventsQuery,
  parseAuditCursor,
  parseAuditLimit,
} from '../audit/audit-event-validators.js';
import { listAuditEvents, type AuditTrail } from '../audit/list-audit-events.js';
import {
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  resetServiceAccountSecret,
  updateServiceAccount,
  type ServiceAccountDeps,
} from '../service-accounts/managed-service-accounts.js';
import {
  CreateServiceAccountBody,
  UpdateServiceAccountBody,
} from '../service-accounts/service-account-validators.js';
import type { PeopleDeps } from '../people/people.js';
import type { SessionStore } from '../sessions/portal-sessions.js';
import type { PortalSessions } from '../sessions/session-cookies.js';
import { actorOf, authenticateApi, bearerForbiddenChallenge } from '../sessions/authenticate.js';
import { credentialPolicyRoutes } from '../credential-policy/credential-policy-routes.js';
import { credentialRoutes } from '../service-accounts/credential-routes.js';
import { peopleRoutes } from '../people/people-routes.js';
import { sessionRoutes } from '../sessions/session-routes.js';
import { factorRoutes } from '../second-factors/factor-routes.js';
import { clientIdOf, noStore, requestMeta } from '../platform/route-helpers.js';

export interface ApiRoutesDeps {
  accounts: ServiceAccountDeps;
  people: PeopleDeps;
  audit: AuditTrail;
  portalUrl: string;
  auth: BearerAuth;
  sessions: PortalSessions;
  tokenService: TokenServiceClient;
  store: SessionStore;
}

/** The REST API's base path. */
export const API_BASE = '/api/v1';

/**
 * The REST API: authenticate (every request under `/api/v1`, before any 404 or 405), then per
 * route parse, one use case, answer; a bearer caller refused for its role gets the challenge.
 */
export function apiRoutes({
  accounts,
  people,
  audit,
  portalUrl,
  auth,
  sessions,
  tokenService,
  store,
}: ApiRoutesDeps): RouteTable {
  const accountPath = `${API_BASE}/service-accounts/:client_id`;
  return [
    { path: API_BASE, use: [authenticateApi(auth, sessions, tokenService)] },
    {
      method: 'GET',
      path: `${API_BASE}/me`,
      handlers: [
        (req, res) => {
          const actor = actorOf(req);
          noStore(res).json({
            tenant: actor.tenant,
            sub: actor.sub,
            email: actor.email,
            principal_type: actor.type,
            role: actor.role,
            can_manage_service_accounts: canManage(actor),
          });
        },
      ],
    },
    {
      method: 'GET',
      path: `${API_BASE}/service-accounts`,
      handlers: [
        async (req, res) => {
          noStore(res).json(await listServiceAccounts(accounts, actorOf(req)));
        },
      ],
    },
    {
      method: 'POST',
      path: `${API_BASE}/service-accounts`,
      input: { body: { type: 'json', fields: fieldsOf(CreateServiceAccountBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = CreateServiceAccountBody.parse(req.body);
          const created = await createServiceAccount(
            accounts,
            actorOf(req),
            requestMeta(req),
            input,
          );
          noStore(res)
            .status(201)
            .setHeader(
              'location',
              `${API_BASE}/service-accounts/${encodeURIComponent(created.client_id)}`,
            )
            .json(created);
        },
      ],
    },
    {
      method: 'GET',
      path: accountPath,
      handlers: [
        async (req, res) => {
          noStore(res).json(await getServiceAccount(accounts, actorOf(req), clientIdOf(req)));
        },
      ],
    },
    {
      method: 'PATCH',
      path: accountPath,
      input: { body: { type: 'json', fields: fieldsOf(UpdateServiceAccountBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = UpdateServiceAccountBody.parse(req.body);
          noStore(res).json(
            await updateServiceAccount(
              accounts,
              actorOf(req),
              requestMeta(req),
              clientIdOf(req),
              input,
            ),
          );
        },
      ],
    },
    {
      method: 'DELETE',
      path: accountPath,
      handlers: [
        async (req, res) => {
          await deleteServiceAccount(accounts, actorOf(req), requestMeta(req), clientIdOf(req));
          noStore(res).status(204).end();
        },
      ],
    },
    {
      method: 'POST',
      path: `${accountPath}/reset-secret`,
      handlers: [
        async (req, res) => {
          noStore(res).json(
            await resetServiceAccountSecret(
              accounts,
              actorOf(req),
              requestMeta(req),
              clientIdOf(req),
            ),
          );
        },
      ],
    },
    ...credentialRoutes(accounts, accountPath),
    ...credentialPolicyRoutes(accounts, API_BASE),
    ...peopleRoutes(people, API_BASE, portalUrl),
    ...sessionRoutes({ ...accounts, store }, API_BASE),
    ...factorRoutes({ ...accounts, store }, API_BASE),
    {
      method: 'GET',
      path: `${API_BASE}/audit-events`,
      input: { query: fieldsOf(AuditEventsQuery) },
      handlers: [
        async (req, res) => {
          const limit = parseAuditLimit(req.query);
          const before = parseAuditCursor(req.query.cursor);
          const page = await listAuditEvents(audit, actorOf(req), limit, before);
          if (page.nextCursor !== undefined) {
            const next = `${portalUrl.replace(/\/+$/, '')}${API_BASE}/audit-events?limit=${limit}&cursor=${page.nextCursor}`;
            res.setHeader('link', `<${next}>; rel="next"`);
          }
          noStore(res).json(page.events);
        },
      ],
    },
    { path: API_BASE, use: [bearerForbiddenChallenge()] },
  ];
}
