/**
 * Service-account management: each use case checks who may act, asks the token service
 * (which holds every credential) and records what happened in the audit trail.
 *
 * Nothing half-done:
 * - a call the token service refused or could not take writes no audit event;
 * - create: if the audit event cannot be written after the token service created the
 *   account, the account is deleted again (compensation) and the caller gets 503; the
 *   secret never left this process. We chose compensation over an outbox because the
 *   account is unusable until its secret is shown, so undoing it loses nothing;
 * - reset, delete, role/grant changes cannot be undone (the old secret is gone, the
 *   deletion is final): the event is retried, and if it still cannot be written it is
 *   logged in full (it never holds a secret) at error level with `audit_write_failures_total`
 *   counted, so an operator can replay it. The caller gets the result (a reset secret must
 *   reach its owner, or the account stays unusable).
 */
import type { Logger } from '@plant/shared';
import type { AuditAction, AuditRepository, NewAuditEvent } from '../data-access/audit-repository.js';
import type { ServiceAccount, ServiceAccountWithSecret } from '@plant/shared';
import type { TokenServiceClient } from '../data-access/token-service-client.js';
import { assertCanManage, actorLabel, type Actor, type RequestMeta } from './actor.js';
import { AuditUnavailable, ServiceAccountNotFound } from './admin-errors.js';
import { isClientId, type CreateServiceAccountInput, type UpdateServiceAccountInput } from './service-account-validators.js';

export interface ServiceAccountDeps {
  tokenService: TokenServiceClient;
  audit: AuditRepository;
  logger: Logger;
  /** Counts audit events that could not be written after an irreversible action. */
  onAuditWriteFailure?: () => void;
}

function assertClientId(clientId: string): void {
  if (!isClientId(clientId)) throw new ServiceAccountNotFound();
}

function auditEvent(actor: Actor, meta: RequestMeta, action: AuditAction, target: { client_id: string; name: string | null }, details: Record<string, unknown> = {}): NewAuditEvent {
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

/** For actions that already happened: a few attempts, then a replayable error log line. */
async function recordIrreversible(deps: ServiceAccountDeps, event: NewAuditEvent): Promise<void> {
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

export async function listServiceAccounts(deps: ServiceAccountDeps, actor: Actor): Promise<ServiceAccount[]> {
  return deps.tokenService.listServiceAccounts(actor.tenant);
}

export async function getServiceAccount(deps: ServiceAccountDeps, actor: Actor, clientId: string): Promise<ServiceAccount> {
  assertClientId(clientId);
  return deps.tokenService.getServiceAccount(actor.tenant, clientId);
}

export async function createServiceAccount(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, input: CreateServiceAccountInput): Promise<ServiceAccountWithSecret> {
  assertCanManage(actor);
  const created = await deps.tokenService.createServiceAccount(actor.tenant, input.name, actorLabel(actor));
  try {
    await deps.audit.insert(auditEvent(actor, meta, 'service_account.create', created, { role: created.role }));
  } catch (auditError) {
    await compensateCreate(deps, actor, created, auditError);
    throw new AuditUnavailable(undefined, { cause: auditError });
  }
  return created;
}

async function compensateCreate(deps: ServiceAccountDeps, actor: Actor, created: ServiceAccount, auditError: unknown): Promise<void> {
  const context = { tenant: actor.tenant, client_id: created.client_id, err: { message: (auditError as Error)?.message } };
  try {
    await deps.tokenService.deleteServiceAccount(actor.tenant, created.client_id);
    deps.logger.warn(context, 'audit event could not be written; the created service account was deleted again');
  } catch (err) {
    // The secret was never shown, so the account cannot be used; an operator deletes it.
    deps.onAuditWriteFailure?.();
    deps.logger.error({ ...context, compensationError: { message: (err as Error)?.message } }, 'audit event could not be written and the created service account could not be deleted');
  }
}

export async function updateServiceAccount(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string, input: UpdateServiceAccountInput): Promise<ServiceAccount> {
  assertCanManage(actor);
  assertClientId(clientId);
  const change: { role?: 'View' | 'Edit'; grants?: Array<{ tag: string; permission: 'edit' }> } = {};
  if (input.role !== undefined) change.role = input.role;
  if (input.grants !== undefined) change.grants = input.grants.map((g) => ({ tag: g.tag, permission: g.permission }));
  const before = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  const updated = await deps.tokenService.updateServiceAccount(actor.tenant, clientId, change, actorLabel(actor));
  const details: Record<string, unknown> = {};
  if (change.role !== undefined) details.role = { from: before.role, to: updated.role };
  if (change.grants !== undefined) details.grants = { from: before.grants.map((g) => g.tag), to: updated.grants.map((g) => g.tag) };
  await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.update', updated, details));
  return updated;
}

export async function resetServiceAccountSecret(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string): Promise<ServiceAccountWithSecret> {
  assertCanManage(actor);
  assertClientId(clientId);
  const reset = await deps.tokenService.resetSecret(actor.tenant, clientId, actorLabel(actor));
  await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.reset_secret', reset));
  return reset;
}

export async function deleteServiceAccount(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string): Promise<void> {
  assertCanManage(actor);
  assertClientId(clientId);
  // Read first: the audit trail names what was deleted, and an unknown id is a 404 before any change.
  const existing = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  await deps.tokenService.deleteServiceAccount(actor.tenant, clientId);
  await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.delete', existing));
}
