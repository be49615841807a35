/**
 * Edge validation of the Plant Store's inputs: the request body (through the shared
 * `NewPlantSchema`, exact int64 ids), the `limit` and `cursor` query parameters.
 */
import {
  BadRequest,
  describeZodError,
  NewPlantSchema,
  pageLimit,
  positionCursor,
  type NewPlant,
} from '@plant/shared/api';
import { z } from 'zod';

export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 1000;

/** `limit` of `GET /plants`: the route parses with it and the OpenAPI document states it. */
const LIST_LIMIT = pageLimit(
  LIST_LIMIT_MAX,
  LIST_LIMIT_DEFAULT,
  'Maximum number of results to return',
);

/** The query of `GET /plants` as the route takes it and the OpenAPI document states it. */
export const ListPlantsQuery = z.object({
  limit: LIST_LIMIT.schema,
  cursor: z
    .string()
    .optional()
    .meta({ param: { description: "Opaque position from a previous page's `Link` header" } }),
});

const PLANT_CURSOR = positionCursor(
  'v1:',
  'cursor is invalid: use the Link header of the previous page',
);

/** The body of `POST /plants`: a JSON object of shape NewPlant, or 400 naming the first problem. */
export function parseNewPlant(body: unknown): NewPlant {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequest('Request body must be a JSON object');
  // reportInput lets the message tell a missing field ("is required") from a wrong type.
  const result = NewPlantSchema.safeParse(body, { reportInput: true });
  if (!result.success) throw new BadRequest(describeZodError(result.error));
  return result.data;
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new BadRequest(`${name} must be given at most once`);
  return value;
}

/** `limit` (1..1000, default 100) as given in the query string; otherwise 400. */
export function parseLimit(query: Record<string, unknown>): number {
  return LIST_LIMIT.parse(query);
}

/** The cursor of a `Link: rel="next"`: opaque to clients, the last id returned so far. */
export function encodeCursor(lastId: string): string {
  return PLANT_CURSOR.encode(lastId);
}

/** The id after which the next page starts, or 400 for anything `encodeCursor` did not produce. */
export function parseCursor(query: Record<string, unknown>): string | undefined {
  return PLANT_CURSOR.decode(single(query, 'cursor'));
}
