import { createHttpApp, type HttpApp, type Knex, type Logger } from '@plant/shared';
import type { IdentityContext } from '../../domain/identity-context.js';
import { requireInternalToken } from './internal-auth.js';
import { internalRoutes, jwksRoutes } from './internal-routes.js';

export interface InternalAppDeps {
  logger: Logger;
  db: Knex;
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
      { use: [jwksRoutes(deps.db, deps.accessTokenTtl, '/internal/v1/realms/:tenant/jwks')] },
      { use: [requireInternalToken(deps.internalApiToken)] },
      { use: [internalRoutes({ identity: deps.identity, db: deps.db, accessTokenTtl: deps.accessTokenTtl })] },
    ],
  });
}
