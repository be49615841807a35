/** Edge validation of `GET /api/v1/audit-events` and the Activity page: `limit`, and the `cursor` of the next page. */
import { pageLimit, positionCursor } from '@plant/shared/api';
import { z } from 'zod';

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 100;

/** `limit` of `GET /audit-events`: the route parses with it and the OpenAPI document states it. */
const AUDIT_LIMIT = pageLimit(
  AUDIT_PAGE_MAX,
  AUDIT_PAGE_DEFAULT,
  'Maximum number of events to return',
);

/** The query of `GET /audit-events` as documented; `parseAuditLimit` and `parseAuditCursor` parse it. */
export const AuditEventsQuery = z.object({
  limit: AUDIT_LIMIT.schema,
  cursor: z
    .string()
    .optional()
    .meta({ param: { description: 'Opaque; from the Link header' } }),
});

// Event ids are a bigserial: positive.
const AUDIT_CURSOR = positionCursor(
  'before:',
  'cursor is not valid; use the link of the previous page',
  { min: 1n },
);

/** `limit` (1..100, default 50) as given in the query string; otherwise 400. */
export function parseAuditLimit(query: Record<string, unknown>): number {
  return AUDIT_LIMIT.parse(query);
}

/** The cursor of the page after the event with this id: opaque to clients. */
export const encodeAuditCursor = (id: string) => AUDIT_CURSOR.encode(id);

/** The id the next page starts below, or 400 for anything `encodeAuditCursor` did not produce. */
export function parseAuditCursor(raw: unknown): string | undefined {
  return AUDIT_CURSOR.decode(raw);
}
