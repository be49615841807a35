/** Edge validation of `GET /api/v1/audit-events` and the Activity page: `limit`, and the `cursor` of the next page. */
import { BadRequest } from '@plant/shared';
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from './service-account-validators.js';

/** Parses `limit` (1..100, default 50) as given in a query string. */
export function parseAuditLimit(raw: unknown): number {
  if (raw === undefined) return AUDIT_PAGE_DEFAULT;
  if (typeof raw !== 'string' || !/^[0-9]{1,4}$/.test(raw)) throw new BadRequest(`limit must be an integer between 1 and ${AUDIT_PAGE_MAX}`);
  const limit = Number(raw);
  if (limit < 1 || limit > AUDIT_PAGE_MAX) throw new BadRequest(`limit must be an integer between 1 and ${AUDIT_PAGE_MAX}`);
  return limit;
}

/** The cursor of the page after the event with this id: opaque to clients. */
export const encodeAuditCursor = (id: string) => Buffer.from(`before:${id}`).toString('base64url');

/** The id the next page starts below, or 400 for anything `encodeAuditCursor` did not produce. */
export function parseAuditCursor(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  const invalid = () => new BadRequest('cursor is not valid; use the link of the previous page');
  if (typeof raw !== 'string') throw invalid();
  const match = raw.length <= 64 ? /^before:([1-9][0-9]{0,18})$/.exec(Buffer.from(raw, 'base64url').toString('utf8')) : null;
  if (!match) throw invalid();
  return match[1]!;
}
