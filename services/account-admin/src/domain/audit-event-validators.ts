/** Edge validation of `GET /api/v1/audit-events` and the Activity page: `limit`, and the `cursor` of the next page. */
import { BadRequest, positionCursor } from '@plant/shared/api';
import { z } from 'zod';

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 100;

/** The query of `GET /audit-events` as documented; `parseAuditLimit` and `parseAuditCursor` parse it. */
export const AuditEventsQuery = z.object({
  limit: z.int().min(1).max(AUDIT_PAGE_MAX).default(AUDIT_PAGE_DEFAULT),
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

/** Parses `limit` (1..100, default 50) as given in a query string. */
export function parseAuditLimit(raw: unknown): number {
  if (raw === undefined) return AUDIT_PAGE_DEFAULT;
  if (typeof raw !== 'string' || !/^[0-9]{1,4}$/.test(raw))
    throw new BadRequest(`limit must be an integer between 1 and ${AUDIT_PAGE_MAX}`);
  const limit = Number(raw);
  if (limit < 1 || limit > AUDIT_PAGE_MAX)
    throw new BadRequest(`limit must be an integer between 1 and ${AUDIT_PAGE_MAX}`);
  return limit;
}

/** The cursor of the page after the event with this id: opaque to clients. */
export const encodeAuditCursor = (id: string) => AUDIT_CURSOR.encode(id);

/** The id the next page starts below, or 400 for anything `encodeAuditCursor` did not produce. */
export function parseAuditCursor(raw: unknown): string | undefined {
  return AUDIT_CURSOR.decode(raw);
}
