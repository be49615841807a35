/** Edge validation of `GET /api/v1/audit-events` and the Activity page: `limit`, and the `cursor` of the next page. */
import { BadRequest, pageLimit } from '@plant/shared/api';
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

/**
 * Where the next page starts in each of the two trails the audit merges (account-admin's own
 * and the realm's security events): ids below `admin` and below `realm`. Opaque to clients:
 * base64url of `before:<admin>:<realm>`, only the exact form `encodeAuditCursor` produces.
 */
export interface AuditPosition {
  admin: string;
  realm: string;
}

const CURSOR_MESSAGE = 'cursor is not valid; use the link of the previous page';
const CURSOR_LITERAL = /^[A-Za-z0-9_-]{1,96}$/;
const POSITION = /^before:([1-9][0-9]{0,18}):([1-9][0-9]{0,18})$/;
const INT64_MAX = 9223372036854775807n;

/** The cursor of the page after this position: opaque to clients. */
export function encodeAuditCursor(position: AuditPosition): string {
  return Buffer.from(`before:${position.admin}:${position.realm}`, 'utf8').toString('base64url');
}

/** The position the next page starts at, or 400 for anything `encodeAuditCursor` did not produce. */
export function parseAuditCursor(raw: unknown): AuditPosition | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !CURSOR_LITERAL.test(raw)) throw new BadRequest(CURSOR_MESSAGE);
  const match = POSITION.exec(Buffer.from(raw, 'base64url').toString('utf8'));
  if (!match || BigInt(match[1]!) > INT64_MAX || BigInt(match[2]!) > INT64_MAX)
    throw new BadRequest(CURSOR_MESSAGE);
  const position = { admin: match[1]!, realm: match[2]! };
  if (encodeAuditCursor(position) !== raw) throw new BadRequest(CURSOR_MESSAGE);
  return position;
}

/** `limit` (1..100, default 50) as given in the query string; otherwise 400. */
export function parseAuditLimit(query: Record<string, unknown>): number {
  return AUDIT_LIMIT.parse(query);
}
