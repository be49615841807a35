import type { RouteTable } from '@plant/shared/http';
import type { TokenServiceClient } from '@plant/shared/token-service-client';
import type { BearerAuth } from '@plant/resource-auth';
import { auditRoutes, type AuditTrail } from '../audit/index.js';
import { credentialPolicyRoutes } from '../credential-policy/index.js';
import { peopleRoutes, type PeopleDeps } from '../people/index.js';
import { canManage, conditional, noStore, actorOf } from '../platform/index.js';
import { factorRoutes } from '../second-factors/index.js';
import {
  credentialRoutes,
  delegationRoutes,
  serviceAccountRoutes,
  type ServiceAccountDeps,
} from '../service-accounts/index.js';
import {
  authenticateApi,
  bearerForbiddenChallenge,
  sessionRoutes,
  type PortalSessions,
  type SessionStore,
} from '../sessions/index.js';

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
/** One service account, and everything under it: the resource `ETag` / `If-Match` cover. */
const ACCOUNT_PATH = `${API_BASE}/service-accounts/:client_id`;
/**
 * One person: their role and status. Their own factors and sessions are conditional in their
 * wings (a constant `"v1"`), the people policy in its own; a factor reset and "sign out
 * everywhere" are not (docs/decisions/0045-etag-on-the-policy-and-invitations.md).
 */
const PERSON_PATH = `${API_BASE}/users/:id`;
/** One invitation: its revocation (an invitation is never changed). */
const INVITATION_PATH = `${API_BASE}/invitations/:id`;

/**
 * Every change of one service account (its settings, credentials, state: any route under
 * ACCOUNT_PATH but reads), of one person's role or status (PATCH, DELETE of PERSON_PATH), and
 * an invitation's revocation (DELETE of INVITATION_PATH) takes `If-Match`, decided in the token
 * service's transaction (platform/etag.ts); a route added under ACCOUNT_PATH adopts it here.
 * The policies, one's own factor and session are made conditional where they are declared.
 */
function conditionalChange(entry: RouteTable[number]): RouteTable[number] {
  if (!('method' in entry) || entry.hot === true || entry.method === 'GET') return entry;
  const covered =
    entry.path.startsWith(ACCOUNT_PATH) ||
    (entry.path === PERSON_PATH && (entry.method === 'PATCH' || entry.method === 'DELETE')) ||
    (entry.path === INVITATION_PATH && entry.method === 'DELETE');
  return covered ? conditional(entry) : entry;
}

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
    ...[
      ...serviceAccountRoutes(accounts, API_BASE),
      ...credentialRoutes(accounts, ACCOUNT_PATH),
      ...delegationRoutes(accounts, ACCOUNT_PATH),
    ].map(conditionalChange),
    ...credentialPolicyRoutes(accounts, API_BASE),
    ...peopleRoutes(people, API_BASE, portalUrl).map(conditionalChange),
    ...sessionRoutes({ ...accounts, store }, API_BASE),
    ...factorRoutes({ ...accounts, store }, API_BASE),
    ...auditRoutes(audit, API_BASE, portalUrl),
    { path: API_BASE, use: [bearerForbiddenChallenge()] },
  ];
}
