import type { Knex } from '@plant/shared/db';

/** Every action the trail records: every insert goes through this list (the table checks only the `<noun>.<verb>` shape). */
export const AUDIT_ACTIONS = [
  'service_account.create',
  'service_account.update',
  'service_account.reset_secret',
  'service_account.delete',
  'service_account.key_add',
  'service_account.key_remove',
  'service_account.trust_add',
  'service_account.trust_remove',
  'service_account.secret_add',
  'service_account.secret_remove',
  'service_account.disable',
  'service_account.enable',
  'service_account.delegation_change',
  'credential_policy.update',
  'user.invite',
  'user.role_change',
  'user.disable',
  'user.enable',
  'user.remove',
  'invitation.revoke',
  'session.end',
  'user.sign_out_everywhere',
  'factor.remove',
  'user.factors_reset',
  'tenant.policy_change',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What `targetClientId` names: a service account's client id, a person's id, an invitation's id or a session. */
export type AuditTargetType = 'service_account' | 'user' | 'invitation' | 'session' | 'tenant';

export interface NewAuditEvent {
  tenant: string;
  actorSub: string;
  actorEmail: string | null;
  actorType: 'user' | 'service_account';
  action: AuditAction;
  /** Defaults to `service_account`. */
  targetType?: AuditTargetType;
  targetClientId: string;
  targetName: string | null;
  details: Record<string, unknown>;
  requestId: string | null;
  address: string | null;
}

export interface AuditEventRow {
  id: string;
  tenant: string;
  occurred_at: Date;
  actor_sub: string;
  actor_email: string | null;
  actor_type: 'user' | 'service_account';
  action: AuditAction;
  target_type: AuditTargetType;
  target_client_id: string;
  target_name: string | null;
  details: Record<string, unknown>;
  request_id: string | null;
  address: string | null;
}

export interface AuditRepository {
  insert(event: NewAuditEvent): Promise<void>;
  /** A tenant's events newest first, with ids below `beforeId` when given. */
  listNewestFirst(tenant: string, limit: number, beforeId?: string): Promise<AuditEventRow[]>;
  ping(): Promise<void>;
}

export function createAuditRepository(db: Knex): AuditRepository {
  return {
    async insert(event) {
      await db('audit_events').insert({
        tenant: event.tenant,
        actor_sub: event.actorSub,
        actor_email: event.actorEmail,
        actor_type: event.actorType,
        action: event.action,
        target_type: event.targetType ?? 'service_account',
        target_client_id: event.targetClientId,
        target_name: event.targetName,
        details: JSON.stringify(event.details),
        request_id: event.requestId,
        address: event.address,
      });
    },
    async listNewestFirst(tenant, limit, beforeId) {
      const query = db('audit_events').where({ tenant }).orderBy('id', 'desc').limit(limit);
      if (beforeId !== undefined) query.andWhere('id', '<', beforeId);
      return (await query) as AuditEventRow[];
    },
    async ping() {
      await db.raw('select 1');
    },
  };
}
