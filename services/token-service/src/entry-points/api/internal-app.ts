import { errorMiddleware, httpObservability, notFoundHandler, type Logger } from '@plant/shared';
import express, { type Express } from 'express';
import type { IdentityContext } from '../../domain/identity-context.js';
import { requireInternalToken } from './internal-auth.js';
import { internalRoutes, publishedKeysRoutes } from './internal-routes.js';

export interface InternalAppDeps {
  logger: Logger;
  identity: IdentityContext;
  internalApiToken: string;
  accessTokenTtl: number;
}

/** The internal listener (account-admin, resource servers): never routed by the ingress. */
export function createInternalApp(deps: InternalAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // Like the public listener: one request context entered anywhere would cost every grant.
  app.use(httpObservability({ logger: deps.logger, requestContext: false }));
  app.use(publishedKeysRoutes(deps.identity, deps.accessTokenTtl, '/internal/v1/realms/:tenant/jwks'));
  app.use(requireInternalToken(deps.internalApiToken));
  app.use(internalRoutes({ identity: deps.identity, accessTokenTtl: deps.accessTokenTtl }));
  app.use(notFoundHandler());
  app.use(errorMiddleware(deps.logger));
  return app;
}
