import { createHttpApp, type HttpApp, type Logger } from '@plant/shared';
import type { IdentityContext } from '../../domain/identity-context.js';
import { requireInternalToken } from './internal-auth.js';
import { internalRoutes, publishedKeysRoute } from './internal-routes.js';

export interface InternalAppDeps {
  logger: Logger;
  identity: IdentityContext;
  internalApiToken: string;
  accessTokenTtl: number;
}

/** The internal listener (account-admin, resource servers): never routed by the ingress. */
export function createInternalApp(deps: InternalAppDeps): HttpApp {
  return createHttpApp({
    logger: deps.logger,
    // Like the public listener: one request context entered anywhere would cost every grant.
    requestContext: false,
    etag: true,
    routes: [
      publishedKeysRoute(deps.identity, deps.accessTokenTtl, '/internal/v1/realms/:tenant/jwks'),
      { use: [requireInternalToken(deps.internalApiToken)] },
      ...internalRoutes({ identity: deps.identity, accessTokenTtl: deps.accessTokenTtl }),
    ],
  });
}
