import type { Request, Response } from 'express';
import { fieldsOf, jsonBody, NewPlantSchema, queryOf, sendJson, type NodeHandler, type Route } from '@plant/shared';
import { principalOf, type AuthenticatedRequest, type BearerAuth } from '@plant/resource-auth';
import { createPlant, type PlantWriter } from '../../domain/create-plant.js';
import { listPlants, type PlantReader } from '../../domain/list-plants.js';
import { ListPlantsQuery, parseCursor, parseLimit, parseNewPlant } from '../../domain/plant-validators.js';
import { openApiDocument } from './openapi.js';

export interface PlantRoutesDependencies {
  plants: PlantReader & PlantWriter;
  auth: BearerAuth;
  /** Base URL clients use ({base_url}): the `Link` header and the OpenAPI `servers` entry. */
  publicUrl: string;
}

type PlantsRequest = AuthenticatedRequest & { body?: unknown };

/**
 * The Plant Store's routes: authenticate, parse, one use case, answer. `GET` and `POST /plants`
 * are the hot path, so their handlers are node-level (`createHttpApp` may serve them without express).
 */
export function plantRoutes({ plants, auth, publicUrl }: PlantRoutesDependencies): Route[] {
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
  const document = JSON.stringify(openApiDocument(publicUrl));
  const describeApi = (_req: Request, res: Response) => {
    res.type('application/json').send(document);
  };
  return [
    { method: 'GET', path: '/plants', hot: true, input: { query: fieldsOf(ListPlantsQuery) }, handlers: [auth.middleware, list] },
    { method: 'POST', path: '/plants', hot: true, input: { body: { type: 'json', fields: fieldsOf(NewPlantSchema) } }, handlers: [auth.middleware, jsonBody(), create] },
    { method: 'GET', path: '/openapi.json', handlers: [describeApi] },
  ];
}
