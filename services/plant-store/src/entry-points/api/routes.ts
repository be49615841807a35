import { NewPlantSchema } from '@plant/shared/api';
import type { IncomingMessage } from 'node:http';
import {
  addAccessLogFields,
  apiDocumentHandler,
  fieldsOf,
  jsonBody,
  queryOf,
  sendJson,
  type NodeHandler,
  type Route,
} from '@plant/shared/http';
import {
  principalOf,
  type AuthenticatedRequest,
  type BearerAuth,
  type Principal,
} from '@plant/resource-auth';
import { createPlant, type PlantWriter } from '../../domain/create-plant.js';
import { listPlants, type PlantReader } from '../../domain/list-plants.js';
import {
  ListPlantsQuery,
  parseCursor,
  parseLimit,
  parseNewPlant,
} from '../../domain/plant-validators.js';
import { openApiDocument } from './openapi.js';
import { annotateActiveSpan } from '@plant/shared/tracing';

/**
 * A call on someone's behalf (an exchanged token, RFC 8693 `act`) names both, in its access
 * line and its span: whose grants it used and which services acted (ids only, as the token
 * service's span of the exchange names them). Fields on the access line rather than a line of
 * their own: one write per request either way, and a plain token adds nothing.
 */
function noteOnBehalf(req: IncomingMessage, principal: Principal): void {
  if (principal.actors === undefined) return;
  const actors = principal.actors.map((actor) => actor.sub);
  annotateActiveSpan({
    'plantstore.tenant': principal.tenant,
    'plantstore.subject': principal.sub,
    'plantstore.actors': actors,
    'plantstore.chain_depth': actors.length,
  });
  addAccessLogFields(req, {
    on_behalf_of: { tenant: principal.tenant, sub: principal.sub, actors },
  });
}

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
  // A read: with a DPoP proof, the page is read while the proof's jti is claimed, and sent only once the claim succeeded.
  const list = auth.readHandler(
    async (req, principal) => {
      const query = queryOf(req);
      const limit = parseLimit(query);
      const page = await listPlants(plants, principal, { limit, afterId: parseCursor(query) });
      noteOnBehalf(req, principal);
      return { limit, page };
    },
    (res, { limit, page }) => {
      if (page.nextCursor !== undefined) {
        res.setHeader(
          'link',
          `<${base}/plants?limit=${limit}&cursor=${page.nextCursor}>; rel="next"`,
        );
      }
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 200, page.plants);
    },
  );
  const create: NodeHandler<PlantsRequest> = async (req, res) => {
    const input = parseNewPlant(req.body);
    const principal = principalOf(req);
    const plant = await createPlant(plants, principal, input);
    noteOnBehalf(req, principal);
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, plant);
  };
  const describeApi = apiDocumentHandler(() => openApiDocument(publicUrl));
  return [
    {
      method: 'GET',
      path: '/plants',
      hot: true,
      input: { query: fieldsOf(ListPlantsQuery) },
      handlers: [list],
    },
    {
      method: 'POST',
      path: '/plants',
      hot: true,
      input: { body: { type: 'json', fields: fieldsOf(NewPlantSchema) } },
      handlers: [auth.middleware, jsonBody(), create],
    },
    { method: 'GET', path: '/openapi.json', handlers: [describeApi] },
  ];
}
