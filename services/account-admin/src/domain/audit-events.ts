import { BadRequest } from '@plant/shared';
import type { AuditEventRow, AuditRepository } from '../data-access/audit-repository.js';
import type { Actor } from './actor.js';
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from './service-account-validators.js';

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

const encodeCursor = (id: string) => Buffer.from(`before:${id}`).toString('base64url');

function decodeCursor(cursor: string): string {
  const match = cursor.length <= 64 ? /^before:([1-9][0-9]{0,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  if (!match) throw new BadRequest('cursor is not valid; use the link of the previous page');
  return match[1]!;
}

/** Parses `limit` (1..100, default 50) as given in a query string. */
export function parseAuditLimit(raw: unknown): number {
  if (raw === undefined) return AUDIT_PAGE_DEFAULT;
  if (typeof raw !== 'string' || !/^[0-9]{1,4}$/.test(raw)) throw new BadRequest(`limit must be an integer between 1 and ${AUDIT_PAGE_MAX}`);
  const limit = Number(raw);
  if (limit < 1 || limit > AUDIT_PAGE_MAX) throw new BadRequest(`limit must be an integer between 1 and ${AUDIT_PAGE_MAX}`);
  return limit;
}

export function parseAuditCursor(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw new BadRequest('cursor is not valid; use the link of the previous page');
  return decodeCursor(raw);
}

/** The caller's tenant's events, newest first; one extra row tells whether a next page exists. */
export async function listAuditEvents(audit: AuditRepository, actor: Actor, limit: number, beforeId?: string): Promise<AuditPage> {
  const rows = await audit.listNewestFirst(actor.tenant, limit + 1, beforeId);
  const page = rows.slice(0, limit).map(toAuditEvent);
  const last = page[page.length - 1];
  return rows.length > limit && last ? { events: page, nextCursor: encodeCursor(last.id) } : { events: page };
}
