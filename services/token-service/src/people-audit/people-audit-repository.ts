/**
 * The people audit trail's table, `user_security_events`: what happened to the realm's people
 * (an invitation accepted, a factor enrolled or used, a credential policy changed). Written in
 * the caller's transaction by the wings that change people and accounts, all through
 * `insertPeopleAuditEvent` (their own shapes, `FactorAuditEvent` and `CredentialAuditEvent`, map
 * onto `NewPeopleAuditEvent`), read newest first by people-audit.ts. Not Shared
 * Signals (signals/security-event-tokens.ts).
 */
import type { Knex } from '@plant/shared/db';

/** One entry to write: never a code, password or token. */
export interface NewPeopleAuditEvent {
  realm: string;
  action: string;
  actorSub: string | null;
  actorEmail: string | null;
  targetSub: string | null;
  targetEmail: string | null;
  details?: Record<string, unknown>;
  address: string | null;
  requestId: string | null;
}

/** One entry as stored. */
export interface PeopleAuditRow {
  id: string;
  realm: string;
  occurred_at: Date;
  actor_sub: string | null;
  actor_email: string | null;
  action: string;
  target_sub: string | null;
  target_email: string | null;
  details: Record<string, unknown>;
  address: string | null;
  request_id: string | null;
}

/** In the caller's transaction: the event exists exactly when the change does. */
export async function insertPeopleAuditEvent(trx: Knex, event: NewPeopleAuditEvent): Promise<void> {
  await trx('user_security_events').insert({
    realm: event.realm,
    action: event.action,
    actor_sub: event.actorSub,
    actor_email: event.actorEmail,
    target_sub: event.targetSub,
    target_email: event.targetEmail,
    details: JSON.stringify(event.details ?? {}),
    address: event.address,
    request_id: event.requestId,
  });
}

export interface PeopleAuditRepository {
  /** The realm's events newest first (by id), with ids below `beforeId` when given. */
  listNewestFirst(realm: string, limit: number, beforeId?: string): Promise<PeopleAuditRow[]>;
}

export function createPeopleAuditRepository(db: Knex): PeopleAuditRepository {
  return {
    async listNewestFirst(realm, limit, beforeId) {
      const query = db('user_security_events')
        .where({ realm })
        .orderBy('id', 'desc')
        .limit(limit)
        .select('*');
      if (beforeId !== undefined) query.andWhere('id', '<', beforeId);
      return (await query) as PeopleAuditRow[];
    },
  };
}
