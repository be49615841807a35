import express, { type Request, type Response } from 'express';
import type { RequestListener } from 'node:http';
import {
  createRequestObserver,
  errorMiddleware,
  expressObserver,
  healthRoutes,
  sendError,
  methodNotAllowed,
  metricsHandler,
  notFoundHandler,
  type createMetricsRegistry,
  type Logger,
} from '@plant/shared';
import type { BearerAuth, RevocationChecker } from '@plant/resource-auth';
import type { PlantRepository } from '../../data-access/plant-repository.js';
import { openApiDocument } from './openapi.js';
import { plantHandlers, plantsFastLane, registerPlantRoutes } from './routes.js';

export interface AppDependencies {
  plants: PlantRepository;
  auth: BearerAuth;
  logger: Logger;
  metrics: ReturnType<typeof createMetricsRegistry>;
  /** Base URL clients use ({base_url}): Link headers and the OpenAPI `servers` entry. */
  publicUrl: string;
  /**
   * The revocation map the bearer auth consults, when there is one: /readyz waits for its
   * first snapshot. Pass the same checker to `createBearerAuth`.
   */
  revocation?: RevocationChecker;
}

/**
 * The Plant Store's request listener: `GET`/`POST /plants` on the fast lane (no express
 * router, about half of such a request's CPU here), everything else on the express app. Tests drive it
 * in-process, `start.ts` serves it.
 */
export function createApp({ plants, auth, logger, metrics, publicUrl, revocation }: AppDependencies): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  const observeRequest = createRequestObserver({ logger, metrics });
  const observe = expressObserver(observeRequest);
  // The hot route first: a request to /plants that the fast lane leaves to express matches the first layer.
  const handlers = plantHandlers({ plants, auth, publicUrl });
  registerPlantRoutes(app, handlers, observe);

  // Probes and metrics next, ahead of `observe`: no access line or metrics for them.
  app.use(
    healthRoutes({
      database: () => plants.ping(),
      ...(revocation
        ? {
            revocation: () => {
              if (!revocation.isReady()) throw new Error('revocation snapshot not loaded');
            },
          }
        : {}),
    }),
  );
  app.get('/metrics', metricsHandler(metrics));

  app.use(observe);

  const document = JSON.stringify(openApiDocument(publicUrl));
  app
    .route('/openapi.json')
    .get((_req: Request, res: Response) => {
      res.type('application/json').send(document);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  app.use(notFoundHandler());
  app.use(errorMiddleware(logger));

  const plantsRoute = () => '/plants';
  const fastLane = plantsFastLane(
    handlers,
    (req, res, next) => observeRequest(req, res, plantsRoute, next),
    (err, req, res) => sendError(logger, err, req, res),
  );
  return function routePlantStoreRequest(req, res) {
    if (!fastLane(req, res)) app(req, res);
  };
}
