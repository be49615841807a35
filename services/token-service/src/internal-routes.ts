import { type InvitationSettings, peopleRoutes, signOutEverywhereRoute } from './people/index.js';
import { credentialRoutes } from './credentials/index.js';
import { internalRealmRoutes } from './realms/index.js';
import { revocationRoutes } from './revocation/index.js';
import { factorRoutes } from './second-factors/index.js';
import { serviceAccountRoutes } from './service-accounts/index.js';
import { conditionalRoute } from '@plant/shared/http';
import {
  InvalidIfMatch,
  PreconditionFailed,
  type IdentityContext,
  type InternalRoute,
} from './platform/index.js';
import { delegationRoutes } from './token-exchange/index.js';

export type { InternalRoute } from './platform/index.js';

export interface InternalRoutesDeps {
  identity: IdentityContext;
  accessTokenTtl: number;
  /** Where invitation links point and how long they work. */
  invitations: InvitationSettings;
  /** The APIs a service account may be allowed to act for others at (token exchange). */
  exchangeAudiences: readonly string[];
}

/**
 * Routes behind the internal credentials (the JWKS route is declared separately, open). A route
 * is `admin` unless every resource server must call it to verify tokens.
 */
export function internalRoutes({
  identity,
  accessTokenTtl,
  invitations,
  exchangeAudiences,
}: InternalRoutesDeps): InternalRoute[] {
  const base = '/internal/v1/realms/:tenant';
  const account = `${base}/service-accounts/:client_id`;
  // A change of one service account, of one person's role or status, of the credential or the
  // factor policy, an invitation's revocation or a factor's removal may be conditional
  // (`If-Match`, checked under the lock the change takes: changeAccount, the user repository's
  // change, the realm lock of each policy's, the revoking update of the invitation's row, the
  // deleting one of the factor's): account-admin's ETag / If-Match
  // (docs/decisions/0043-etag-from-revisions.md, 0045-etag-on-the-policy-and-invitations.md).
  const user = `${base}/users/:id`;
  const conditionalPaths = new Set([
    `${base}/credential-policy`,
    `${base}/invitations/:id`,
    `${base}/factor-policy`,
    `${user}/factors/:factor_id`,
  ]);
  const conditional = (route: InternalRoute): InternalRoute =>
    route.method !== 'GET' &&
    (route.path.startsWith(account) ||
      (route.path === user && route.method !== 'POST') ||
      conditionalPaths.has(route.path))
      ? conditionalRoute(
          route,
          () => new InvalidIfMatch(),
          () => new PreconditionFailed(),
        )
      : route;
  // Each wing declares its own routes; the table keeps the order they were declared in here.
  return [
    ...internalRealmRoutes(identity, base),
    ...[
      ...serviceAccountRoutes(identity, base, account),
      ...credentialRoutes(identity, account),
      ...delegationRoutes(identity, account, exchangeAudiences),
    ].map(conditional),
    // A person's role and status (PATCH, DELETE of one person) may be conditional too.
    ...peopleRoutes(identity, invitations, base).map(conditional),
    signOutEverywhereRoute(identity, base),
    // The factor policy (PUT) and one factor's removal may be conditional too.
    ...factorRoutes(identity, base).map(conditional),
    ...revocationRoutes(identity, accessTokenTtl, base),
  ];
}
