/**
 * The audit trail as the API and the Activity page show it: account-admin's own events (who
 * changed which service account, person or invitation) merged with the realm's security events
 * (an invitation accepted, a factor enrolled: what happened at the token service itself), newest
 * first. A k-way merge by time over both, each read by id below its own position; the cursor
 * carries both positions, so one page never repeats or skips an event of either.
 */
import type { RealmSecurityEvent } from '@plant/shared/token-service-client';
import type { AuditEventRow, AuditTargetType } from './audit-repository.js';
import { type Actor, TokenServiceUnavailable } from '../platform/index.js';
import { type AuditPosition, encodeAuditCursor } from './audit-event-validators.js';

/** Every action the audit trail records (the API documents the same list). */
export { AUDIT_ACTIONS } from './audit-repository.js';

/** The `AuditEvent` of the API: who, what, which target, when, from where. Never a secret. */
export interface AuditEvent {
  id: string;
  occurred_at: string;
  actor_sub: string;
  actor_email: string | null;
  actor_type: 'user' | 'service_account';
  action: string;
  /** What `client_id` names: a service account's client id, a person's id, an invitation's id. */
  target_type: AuditTargetType;
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

/** What listing reads: both trails, each newest first by id, below an id when given. */
export interface AuditTrail {
  listNewestFirst(tenant: string, limit: number, beforeId?: string): Promise<AuditEventRow[]>;
  listRealmEvents(tenant: string, limit: number, beforeId?: string): Promise<RealmSecurityEvent[]>;
}

/** Realm event ids are the realm's own sequence: prefixed so no id of the merged trail names two events. */
const REALM_ID_PREFIX = 'realm-';
const NO_BOUND = '9223372036854775807';

function fromAdmin(row: AuditEventRow): AuditEvent {
  return {
    id: String(row.id),
    occurred_at: new Date(row.occurred_at).toISOString(),
    actor_sub: row.actor_sub,
    actor_email: row.actor_email,
    actor_type: row.actor_type,
    action: row.action,
    target_type: row.target_type ?? 'service_account',
    client_id: row.target_client_id,
    name: row.target_name,
    details: row.details ?? {},
    request_id: row.request_id,
    address: row.address,
  };
}

function fromRealm(event: RealmSecurityEvent): AuditEvent {
  return {
    id: `${REALM_ID_PREFIX}${event.id}`,
    occurred_at: event.occurred_at,
    actor_sub: event.actor_sub ?? '',
    actor_email: event.actor_email,
    actor_type: 'user',
    action: event.action,
    // The realm's policy is the tenant's, not a person's.
    target_type: event.action.startsWith('tenant.') ? 'tenant' : 'user',
    client_id: event.target_sub ?? '',
    name: event.target_email,
    details: event.details ?? {},
    request_id: event.request_id,
    address: event.address,
  };
}

/** The next page's bound in one trail: below the last event shown, or (none shown) above everything read. */
function nextBound(read: { id: string }[], shown: number, current: string | undefined): string {
  const last = shown > 0 ? read[shown - 1] : undefined;
  if (last !== undefined) return last.id;
  if (read[0] !== undefined) return String(BigInt(read[0].id) + 1n);
  return current ?? NO_BOUND;
}

/** The caller's tenant's events of both trails, newest first; one extra row of each tells whether a next page exists. */
export async function listAuditEvents(
  audit: AuditTrail,
  actor: Actor,
  limit: number,
  before?: AuditPosition,
): Promise<AuditPage> {
  const [admin, realm] = await Promise.all([
    audit.listNewestFirst(actor.tenant, limit + 1, before?.admin),
    // The trail stays readable while the token service is down: its own events only, and
    // the realm's position unchanged, so they show on a later page once it is back.
    audit.listRealmEvents(actor.tenant, limit + 1, before?.realm).catch((err: unknown) => {
      if (err instanceof TokenServiceUnavailable) return [];
      throw err;
    }),
  ]);
  const events: AuditEvent[] = [];
  let a = 0;
  let r = 0;
  while (events.length < limit && (a < admin.length || r < realm.length)) {
    const nextAdmin = admin[a];
    const nextRealm = realm[r];
    // Newest first; at the same instant the admin's action comes first (it usually caused the other).
    if (
      nextRealm === undefined ||
      (nextAdmin !== undefined &&
        new Date(nextAdmin.occurred_at).getTime() >= Date.parse(nextRealm.occurred_at))
    ) {
      events.push(fromAdmin(nextAdmin!));
      a += 1;
    } else {
      events.push(fromRealm(nextRealm));
      r += 1;
    }
  }
  if (a >= admin.length && r >= realm.length) return { events };
  const position = {
    admin: nextBound(
      admin.map((row) => ({ id: String(row.id) })),
      a,
      before?.admin,
    ),
    realm: nextBound(realm, r, before?.realm),
  };
  return { events, nextCursor: encodeAuditCursor(position) };
}
