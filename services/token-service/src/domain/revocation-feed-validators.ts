import { BadRequest, parseFeedPosition } from '@plant/shared';
import { MAX_CHANGES_PAGE } from './get-revocation-changes.js';

/** The query of `GET /internal/v1/revocations/changes`. */
export const CHANGES_QUERY = ['after', 'limit'] as const;

/**
 * `after`: a position exactly as the feed writes them (0 up to the int64 maximum, decimal, no
 * sign or leading zero), required; `limit`: 1..MAX_CHANGES_PAGE, default the maximum. Anything
 * else, repeated parameters included, is a 400: no input reaches Postgres as an out-of-range bound.
 */
export function parseChangesQuery(query: Record<string, unknown>): { after: string; limit: number } {
  const after = parseFeedPosition(query.after);
  if (after === undefined) throw new BadRequest('after must be a feed position: a decimal integer from 0 to 9223372036854775807');
  const raw = query.limit;
  if (raw === undefined) return { after, limit: MAX_CHANGES_PAGE };
  const limit = typeof raw === 'string' && /^[1-9][0-9]{0,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit <= MAX_CHANGES_PAGE)) throw new BadRequest(`limit must be an integer between 1 and ${MAX_CHANGES_PAGE}`);
  return { after, limit };
}
