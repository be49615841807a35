import {
  createRequestObserver,
  errorMiddleware,
  expressObserver,
  healthRoutes,
  metricsHandler,
  notFoundHandler,
  NotFound,
  type Logger,
  type ReadinessCheck,
} from '@plant/shared';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { RequestListener } from 'node:http';
import type { Registry } from 'prom-client';
import { isTenantName } from '../../domain/principal-validators.js';
import type { RealmProviders } from '../../provider/realm-providers.js';
import { interactionRoutes, type InteractionDeps } from '../web/interaction-routes.js';
import { jwksRoutes } from './internal-routes.js';
import { createPublicListener } from './public-listener.js';
import type { Knex } from '@plant/shared';

export interface PublicAppDeps {
  logger: Logger;
  metrics: Registry;
  readiness: Record<string, ReadinessCheck>;
  providers: RealmProviders;
  db: Knex;
  accessTokenTtl: number;
  trustProxy: number;
  interactions: InteractionDeps;
}

/** The public listener: health, metrics, and the realms (`/realms/<tenant>/...`). */
export function createPublicApp(deps: PublicAppDeps): RequestListener {
  // No request context in this process (grants would pay for it in every promise): lines
  // logged inside a grant take the id from oidc-provider's own context (`grantRequestId`).
  const observe = createRequestObserver({ logger: deps.logger, metrics: deps.metrics, requestContext: false });
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.trustProxy > 0 ? deps.trustProxy : false);
  app.use(expressObserver(observe));
  app.use(healthRoutes(deps.readiness));
  app.get('/metrics', metricsHandler(deps.metrics));
  app.use(jwksRoutes(deps.db, deps.accessTokenTtl, '/realms/:tenant/protocol/openid-connect/certs'));
  app.use(interactionRoutes(deps.interactions));
  app.use('/realms/:tenant', async function realm(req: Request, res: Response, next: NextFunction) {
    const tenant = String(req.params.tenant);
    const handler = isTenantName(tenant) ? await deps.providers.handlerFor(tenant) : undefined;
    if (!handler) {
      next(new NotFound('Realm not found'));
      return;
    }
    handler(req, res);
  });
  app.use(notFoundHandler());
  app.use(errorMiddleware(deps.logger));
  return createPublicListener(app, deps.providers, observe);
}
