import type { Express, RequestHandler } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonBody, methodNotAllowed, nodeRoute, queryOf, sendJson, type NodeHandler } from '@plant/shared';
import { principalOf, type AuthenticatedRequest, type BearerAuth } from '@plant/resource-auth';
import type { PlantRepository } from '../../data-access/plant-repository.js';
import { createPlant } from '../../domain/create-plant.js';
import { listPlants } from '../../domain/list-plants.js';
import { parseCursor, parseLimit, parseNewPlant } from '../../domain/plant-validators.js';

export interface PlantRoutesDependencies {
  plants: PlantRepository;
  auth: BearerAuth;
  /** Base URL clients use, for the `Link` header. */
  publicUrl: string;
}

type PlantsRequest = AuthenticatedRequest & { body?: unknown };

export interface PlantHandlers {
  list: NodeHandler<PlantsRequest>[];
  create: NodeHandler<PlantsRequest>[];
}

/** `GET` and `POST /plants`: authenticate, parse, one use case, answer. Node-level only, so they run with or without express. */
export function plantHandlers({ plants, auth, publicUrl }: PlantRoutesDependencies): PlantHandlers {
  const base = publicUrl.replace(/\/+$/, '');
  const list: NodeHandler<PlantsRequest> = async (req, res) => {
    const query = queryOf(req);
    const limit = parseLimit(query);
    const afterId = parseCursor(query);
    const page = await listPlants(plants, principalOf(req), { limit, afterId });
    if (page.nextCursor !== undefined) {
      res.setHeader('link', `<${base}/plants?limit=${limit}&cursor=${page.nextCursor}>; rel="next"`);
    }
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, page.plants);
  };
  const create: NodeHandler<PlantsRequest> = async (req, res) => {
    const input = parseNewPlant(req.body);
    const plant = await createPlant(plants, principalOf(req), input);
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, plant);
  };
  return { list: [auth.middleware, list], create: [auth.middleware, jsonBody(), create] };
}

/**
 * `/plants` on the express app, first among its layers, behind `observe`; with any other
 * method a 405. Express serves the spellings the fast lane leaves to it (`/Plants`,
 * `/plants/`) and HEAD; see `plantsFastLane`.
 */
export function registerPlantRoutes(app: Express, { list, create }: PlantHandlers, observe: RequestHandler): void {
  app
    .route('/plants')
    .all(observe)
    .get(...(list as RequestHandler[]))
    .post(...(create as RequestHandler[]))
    .all(methodNotAllowed(['GET', 'HEAD', 'POST']));
}

/**
 * The hot path without express: `GET` and `POST` on exactly `/plants` run the same handlers
 * through `nodeRoute`, with the same request id, access line and metrics, and errors in the
 * same `Error` shape. Returns false for anything else (the caller hands it to express).
 */
export function plantsFastLane(
  { list, create }: PlantHandlers,
  observe: (req: IncomingMessage, res: ServerResponse, next: () => void) => void,
  onError: (err: unknown, req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const routes: Record<string, (req: PlantsRequest, res: ServerResponse) => void> = { GET: nodeRoute(list, onError), POST: nodeRoute(create, onError) };
  return function servePlants(req, res) {
    const url = req.url ?? '';
    if (!(url === '/plants' || url.startsWith('/plants?'))) return false;
    const route = routes[req.method ?? ''];
    if (route === undefined) return false;
    observe(req, res, () => route(req, res));
    return true;
  };
}
