import { createHttpApp, type HttpApp } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import {
  type IdentityContext,
  authenticateInternalCaller,
  requireInternalScope,
  type InternalCredentials,
} from './platform/index.js';
import type { InvitationSettings } from './people/index.js';
import { internalRoutes, type InternalRoute } from './internal-routes.js';
import { REVOCATION_CHANGES_PATH } from './revocation/index.js';
import { publishedKeysRoute, signingRoutes } from './signing-keys/index.js';

export interface InternalAppDeps {
  logger: Logger;
  identity: IdentityContext;
  /** Who may call (RESOURCE_SERVER_TOKENS, ACCOUNT_ADMIN_TOKEN). */
  credentials: InternalCredentials;
  accessTokenTtl: number;
  invitations: InvitationSettings;
  /** The APIs a service account may be allowed to act for others at (token exchange). */
  exchangeAudiences: readonly string[];
  /** After a realm's key changed (its signing algorithm set): every replica rebuilds the realm. */
  announceKeyChange(tenant: string): Promise<void>;
}

/** The route with its scope checked first: in the table, so no route can be added without one. */
function scoped(route: InternalRoute): InternalRoute {
  return { ...route, handlers: [requireInternalScope(route.scope), ...route.handlers] };
}

/** The internal listener (account-admin, resource servers): never routed by the ingress. */
export function createInternalApp(deps: InternalAppDeps): HttpApp {
  return createHttpApp({
    logger: deps.logger,
    // Like the public listener: one request context entered anywhere would cost every grant.
    requestContext: false,
    // Every resource-server replica polls the change feed every few seconds: its answers would be
    // most of the log. A refused or failed poll is still logged.
    quietPaths: [REVOCATION_CHANGES_PATH],
    etag: true,
    routes: [
      publishedKeysRoute(deps.identity, deps.accessTokenTtl, '/internal/v1/realms/:tenant/jwks'),
      // Unknown callers get 401 on any path (no 404 or 405 tells them what is here); known ones, 403 outside their scope.
      { use: [authenticateInternalCaller(deps.credentials)] },
      ...internalRoutes({
        identity: deps.identity,
        accessTokenTtl: deps.accessTokenTtl,
        invitations: deps.invitations,
        exchangeAudiences: deps.exchangeAudiences,
      }).map(scoped),
      ...signingRoutes({ identity: deps.identity, announceKeyChange: deps.announceKeyChange }).map(
        scoped,
      ),
    ],
  });
}
