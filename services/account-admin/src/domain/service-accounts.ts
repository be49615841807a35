/**
 * Service-account management: each use case (`<verb>-service-account.ts` beside this file)
 * checks who may act, asks the token service (which holds every credential) and records what
 * happened in the audit trail through the helpers here.
 *
 * Nothing half-done:
 * - a call the token service refused or could not take writes no audit event;
 * - create: if the audit event cannot be written after the token service created the
 *   account, the account is deleted again (compensation) and the caller gets 503; the
 *   secret never left this process. We chose compensation over an outbox because the
 *   account is unusable until its secret is shown, so undoing it loses nothing; adding a key
 *   or a trusted workload and enabling an account grant access too, and are undone the same
 *   way (`recordOrUndo`);
 * - reset, delete, role/grant changes, removing a credential and disabling cannot be undone
 *   (the old secret is gone, the deletion is final, the tokens are revoked): the event is retried, and if it still cannot be written it is
 *   logged in full (it never holds a secret) at error level with `audit_write_failures_total`
 *   counted, so an operator can replay it. The caller gets the result (a reset secret must
 *   reach its owner, or the account stays unusable).
 */
import type { Logger } from '@plant/shared';
import type { AuditAction, AuditRepository, NewAuditEvent } from '../data-access/audit-repository.js';
import type { TokenServiceClient } from '@plant/shared';
import type { Actor, RequestMeta } from './actor.js';
import { AuditUnavailable, ServiceAccountNotFound } from './errors.js';
import { isClientId } from './service-account-validators.js';

export interface ServiceAccountDeps {
  tokenService: TokenServiceClient;
  audit: AuditRepository;
  logger: Logger;
  /** Counts audit events that could not be written after an irreversible action. */
  onAuditWriteFailure?: () => void;
}

export function assertClientId(clientId: string): void {
  if (!isClientId(clientId)) throw new ServiceAccountNotFound();
}

export function auditEvent(actor: Actor, meta: RequestMeta, action: AuditAction, target: { client_id: string; name: string | null }, details: Record<string, unknown> = {}): NewAuditEvent {
  return {
    tenant: actor.tenant,
    actorSub: actor.sub,
    actorEmail: actor.email,
    actorType: actor.type,
    action,
    targetClientId: target.client_id,
    targetName: target.name,
    details,
    requestId: meta.requestId,
    address: meta.address,
  };
}

/**
 * For actions that grant access (a key or trusted workload added, an account enabled): the
 * event is written, or the action is undone (`undo`) and the caller gets 503. An access
 * nobody can trace is worse than a refused change.
 */
export async function recordOrUndo(deps: ServiceAccountDeps, event: NewAuditEvent, undo: () => Promise<unknown>): Promise<void> {
  try {
    await deps.audit.insert(event);
  } catch (auditError) {
    const context = { tenant: event.tenant, client_id: event.targetClientId, action: event.action, err: { message: (auditError as Error)?.message } };
    try {
      await undo();
      deps.logger.warn(context, 'audit event could not be written; the change was undone');
    } catch (err) {
      deps.onAuditWriteFailure?.();
      deps.logger.error({ ...context, auditEvent: event, undoError: { message: (err as Error)?.message } }, 'audit event could not be written and the change could not be undone');
    }
    throw new AuditUnavailable(undefined, { cause: auditError });
  }
}

/** For actions that already happened: a few attempts, then a replayable error log line. */
export async function recordIrreversible(deps: ServiceAccountDeps, event: NewAuditEvent): Promise<void> {
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    try {
      await deps.audit.insert(event);
      return;
    } catch (err) {
      if (attempt === 3) {
        deps.onAuditWriteFailure?.();
        deps.logger.error({ err: { message: (err as Error).message, code: (err as { code?: unknown }).code }, auditEvent: event }, 'audit event not persisted');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}
