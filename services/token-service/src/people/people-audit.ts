/**
 * The people audit trail: the realm-side record of what happened to people
 * (`user_security_events`), answered at `GET /internal/v1/realms/:t/security-events` as
 * `RealmSecurityEvent`s and read by account-admin beside its own audit trail. Not Shared Signals:
 * the Security Event Tokens sent to receivers are signals/security-event-tokens.ts.
 */
import { BadRequest } from '@plant/shared/api';
import { parseFeedPosition, type RealmSecurityEvent } from '@plant/shared/token-service-client';
import type { PeopleAuditRow } from '../people-audit/index.js';
import type { IdentityContext } from '../platform/index.js';
import { assertTenantExists } from '../realms/index.js';

export const SECURITY_EVENTS_QUERY = ['before', 'limit'] as const;
export const SECURITY_EVENTS_PAGE_MAX = 200;

/** `before`: an event id (1..int64 max), optional; `limit`: 1..200, default 50. Anything else is 400. */
export function parseSecurityEventsQuery(query: Record<string, unknown>): {
  before: string | undefined;
  limit: number;
} {
  let before: string | undefined;
  if (query.before !== undefined) {
    before = parseFeedPosition(query.before);
    if (before === undefined || before === '0')
      throw new BadRequest(
        'before must be an event id: a decimal integer from 1 to 9223372036854775807',
      );
  }
  const raw = query.limit;
  if (raw === undefined) return { before, limit: 50 };
  const limit = typeof raw === 'string' && /^[1-9][0-9]{0,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit <= SECURITY_EVENTS_PAGE_MAX))
    throw new BadRequest(`limit must be an integer between 1 and ${SECURITY_EVENTS_PAGE_MAX}`);
  return { before, limit };
}

function toRealmSecurityEvent(row: PeopleAuditRow): RealmSecurityEvent {
  return {
    id: String(row.id),
    occurred_at: new Date(row.occurred_at).toISOString(),
    actor_sub: row.actor_sub,
    actor_email: row.actor_email,
    action: row.action,
    target_sub: row.target_sub,
    target_email: row.target_email,
    details: row.details ?? {},
    address: row.address,
    request_id: row.request_id,
  };
}

/** Newest first (by id, the order they were written), ids below `before` when given. */
export async function listSecurityEvents(
  ctx: Pick<IdentityContext, 'peopleAudit' | 'realms'>,
  tenant: string,
  query: { before: string | undefined; limit: number },
): Promise<RealmSecurityEvent[]> {
  const rows = await ctx.peopleAudit.listNewestFirst(tenant, query.limit, query.before);
  if (rows.length === 0) await assertTenantExists(ctx, tenant);
  return rows.map(toRealmSecurityEvent);
}
