import type { InvitationSettings } from '../people/invitations.js';
import { credentialRoutes } from '../credentials/internal-credential-routes.js';
import { peopleRoutes, signOutEverywhereRoute } from '../people/internal-people-routes.js';
import { internalRealmRoutes } from '../realms/internal-realm-routes.js';
import { revocationRoutes } from '../revocation/revocation-routes.js';
import { factorRoutes } from '../second-factors/internal-factor-routes.js';
import { serviceAccountRoutes } from '../service-accounts/internal-service-account-routes.js';
import type { IdentityContext } from './identity-context.js';
import type { InternalRoute } from './internal-route-helpers.js';

export type { InternalRoute } from './internal-route-helpers.js';

export interface InternalRoutesDeps {
  identity: IdentityContext;
  accessTokenTtl: number;
  /** Where invitation links point and how long they work. */
  invitations: InvitationSettings;
}

/**
 * Routes behind the internal credentials (the JWKS route is declared separately, open). A route
 * is `admin` unless every resource server must call it to verify tokens.
 */
export function internalRoutes({
  identity,
  accessTokenTtl,
  invitations,
}: InternalRoutesDeps): InternalRoute[] {
  const base = '/internal/v1/realms/:tenant';
  const account = `${base}/service-accounts/:client_id`;
  // Each wing declares its own routes; the table keeps the order they were declared in here.
  return [
    ...internalRealmRoutes(identity, base),
    ...serviceAccountRoutes(identity, base, account),
    ...credentialRoutes(identity, account),
    ...peopleRoutes(identity, invitations, base),
    signOutEverywhereRoute(identity, base),
    ...factorRoutes(identity, base),
    ...revocationRoutes(identity, accessTokenTtl, base),
  ];
}
