import type { AuditEventRow, AuditRepository } from '../data-access/audit-repository.js';

/** Every action the audit trail records (the API documents the same list). */
export { AUDIT_ACTIONS } from '../data-access/audit-repository.js';
import type { Actor } from './actor.js';
import { encodeAuditCursor } from './audit-event-validators.js';

/** The `AuditEvent` of the API: who, what, which service account, when, from where. Never a secret. */
export interface AuditEvent {
  id: string;
  occurred_at: string;
  actor_sub: string;
  actor_email: string | null;
  actor_type: 'user' | 'service_account';
  action: string;
  client_id: string;
  name: string | null;
  details: Record<string, unknown>;
  request_id: string | null;
  address: string | null;
}

export interface AuditPage {
  events: AuditEvent[];
  /** Opaque cursor of the next (older) page, absent on the last page. */
  nextCursor?: string;
}

/** What listing reads the audit trail through. */
export type AuditTrail = Pick<AuditRepository, 'listNewestFirst'>;

function toAuditEvent(row: AuditEventRow): AuditEvent {
  return {
    id: String(row.id),
    occurred_at: new Date(row.occurred_at).toISOString(),
    actor_sub: row.actor_sub,
    actor_email: row.actor_email,
    actor_type: row.actor_type,
    action: row.action,
    client_id: row.target_client_id,
    name: row.target_name,
    details: row.details ?? {},
    request_id: row.request_id,
    address: row.address,
  };
}

/** The caller's tenant's events, newest first; one extra row tells whether a next page exists. */
export async function listAuditEvents(
  audit: AuditTrail,
  actor: Actor,
  limit: number,
  beforeId?: string,
): Promise<AuditPage> {
  const rows = await audit.listNewestFirst(actor.tenant, limit + 1, beforeId);
  const page = rows.slice(0, limit).map(toAuditEvent);
  const last = page[page.length - 1];
  return rows.length > limit && last
    ? { events: page, nextCursor: encodeAuditCursor(last.id) }
    : { events: page };
}
