import type { Express, Request, RequestHandler, Response } from 'express';
import { jsonBody, methodNotAllowed } from '@plant/shared';
import { principalOf, type BearerAuth } from '@plant/resource-auth';
import type { PlantRepository } from '../../data-access/plant-repository.js';
import { createPlant } from '../../domain/create-plant.js';
import { listPlants } from '../../domain/list-plants.js';
import { parseCursor, parseLimit, parseNewPlant } from '../../domain/plant-validators.js';

export interface PlantRoutesDependencies {
  plants: PlantRepository;
  auth: BearerAuth;
  /** Base URL clients use, for the `Link` header. */
  publicUrl: string;
  /** Request id, metrics and access line (`httpObservability`), first on the route. */
  observe: RequestHandler;
}

/**
 * `/plants`, on the app itself and ahead of every other layer: observe, authenticate, parse,
 * one use case, answer. Nothing else on the hot path (no Router to enter and leave).
 */
export function registerPlantRoutes(app: Express, { plants, auth, publicUrl, observe }: PlantRoutesDependencies): void {
  const base = publicUrl.replace(/\/+$/, '');

  app
    .route('/plants')
    .all(observe)
    .get(auth.middleware, async (req: Request, res: Response) => {
      const query = req.query as Record<string, unknown>;
      const limit = parseLimit(query);
      const afterId = parseCursor(query);
      const page = await listPlants(plants, principalOf(req), { limit, afterId });
      if (page.nextCursor !== undefined) {
        res.setHeader('link', `<${base}/plants?limit=${limit}&cursor=${page.nextCursor}>; rel="next"`);
      }
      res.setHeader('cache-control', 'no-store');
      res.json(page.plants);
    })
    .post(auth.middleware, jsonBody(), async (req: Request, res: Response) => {
      const input = parseNewPlant(req.body);
      const plant = await createPlant(plants, principalOf(req), input);
      res.setHeader('cache-control', 'no-store');
      res.json(plant);
    })
    .all(methodNotAllowed(['GET', 'HEAD', 'POST']));
}
