/**
 * Writing the audit trail after a change, as every management use case does: the deps they
 * share, and the two ways a write that fails is handled (undo the change, or retry and log a
 * replayable line). Moved here from managed-service-accounts.ts unchanged.
 */
import type { Logger } from '@plant/shared/logging';
import type { TokenServiceClient } from '@plant/shared/token-service-client';
import { AuditUnavailable } from '../platform/index.js';
import type { AuditRepository, NewAuditEvent } from './audit-repository.js';

/** What a use case that changes something and records it needs. */
export interface ManagementDeps {
  tokenService: TokenServiceClient;
  audit: AuditRepository;
  logger: Logger;
  /** Counts audit events that could not be written after an irreversible action. */
  onAuditWriteFailure?: () => void;
}

/**
 * For actions that grant access (a key or trusted workload added, an account enabled): the
 * event is written, or the action is undone (`undo`) and the caller gets 503. An access
 * nobody can trace is worse than a refused change.
 */
export async function recordOrUndo(
  deps: ManagementDeps,
  event: NewAuditEvent,
  undo: () => Promise<unknown>,
): Promise<void> {
  try {
    await deps.audit.insert(event);
  } catch (auditError) {
    const context = {
      tenant: event.tenant,
      client_id: event.targetClientId,
      action: event.action,
      err: { message: (auditError as Error)?.message },
    };
    try {
      await undo();
      deps.logger.warn(context, 'audit event could not be written; the change was undone');
    } catch (err) {
      deps.onAuditWriteFailure?.();
      deps.logger.error(
        { ...context, auditEvent: event, undoError: { message: (err as Error)?.message } },
        'audit event could not be written and the change could not be undone',
      );
    }
    throw new AuditUnavailable(undefined, { cause: auditError });
  }
}

/** For actions that already happened: a few attempts, then a replayable error log line. */
export async function recordIrreversible(
  deps: ManagementDeps,
  event: NewAuditEvent,
): Promise<void> {
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    try {
      await deps.audit.insert(event);
      return;
    } catch (err) {
      if (attempt === 3) {
        deps.onAuditWriteFailure?.();
        deps.logger.error(
          {
            err: { message: (err as Error).message, code: (err as { code?: unknown }).code },
            auditEvent: event,
          },
          'audit event not persisted',
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}
