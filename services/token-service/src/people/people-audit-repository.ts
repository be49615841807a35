import type { Knex } from '@plant/shared/db';

/** What happened at the realm itself (an invitation accepted, a factor enrolled or used): never a code, password or token. */
export interface NewSecurityEvent {
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

export interface SecurityEventRow {
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
export async function insertSecurityEvent(trx: Knex, event: NewSecurityEvent): Promise<void> {
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

export interface SecurityEventRepository {
  /** The realm's events newest first (by id), with ids below `beforeId` when given. */
  listNewestFirst(realm: string, limit: number, beforeId?: string): Promise<SecurityEventRow[]>;
}

export function createSecurityEventRepository(db: Knex): SecurityEventRepository {
  return {
    async listNewestFirst(realm, limit, beforeId) {
      const query = db('user_security_events')
        .where({ realm })
        .orderBy('id', 'desc')
        .limit(limit)
        .select('*');
      if (beforeId !== undefined) query.andWhere('id', '<', beforeId);
      return (await query) as SecurityEventRow[];
    },
  };
}
