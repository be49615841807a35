/**
 * The audited administration of service accounts, as the account admin API and portal offer
 * it. The token service owns the accounts and every credential (its service-accounts.ts); each
 * change here checks who may act, asks the token
 * service, and records what happened in the audit trail (audit/record-audit-event.ts). Reads
 * record nothing.
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
 *
 * Creating, resetting and deleting an account mint or remove credentials: they also need a
 * recent second factor (platform/step-up.ts) from a person who has one. An account's own
 * credentials (keys, trusts, secrets) are managed-credentials.ts.
 */
import type {
  ServiceAccount,
  ServiceAccountChange,
  ServiceAccountWithSecret,
} from '@plant/shared/token-service-client';
import {
  recordIrreversible,
  recordOrUndo,
  type AuditAction,
  type ManagementDeps,
  type NewAuditEvent,
} from '../audit/index.js';
import {
  actorLabel,
  assertCanManage,
  type Actor,
  type RequestMeta,
  AuditUnavailable,
  ServiceAccountNotFound,
  assertRecentFactor,
} from '../platform/index.js';
import {
  type CreateServiceAccountInput,
  isClientId,
  type UpdateServiceAccountInput,
} from './service-account-validators.js';

/** What every use case of this wing needs: the token service and the audit trail. */
export type ServiceAccountDeps = ManagementDeps;

export function assertClientId(clientId: string): void {
  if (!isClientId(clientId)) throw new ServiceAccountNotFound();
}

export function auditEvent(
  actor: Actor,
  meta: RequestMeta,
  action: AuditAction,
  target: { client_id: string; name: string | null },
  details: Record<string, unknown> = {},
): NewAuditEvent {
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

/** Creates the account and returns its secret, the only time it is shown; undone when the audit event cannot be written (audit/record-audit-event.ts). */
export async function createServiceAccount(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  input: CreateServiceAccountInput,
): Promise<ServiceAccountWithSecret> {
  assertCanManage(actor);
  assertRecentFactor(actor, 'create-service-account');
  const created = await deps.tokenService.createServiceAccount(
    actor.tenant,
    input.name,
    actorLabel(actor),
  );
  try {
    await deps.audit.insert(
      auditEvent(actor, meta, 'service_account.create', created, { role: created.role }),
    );
  } catch (auditError) {
    await compensateCreate(deps, actor, created, auditError);
    throw new AuditUnavailable(undefined, { cause: auditError });
  }
  return created;
}

async function compensateCreate(
  deps: ServiceAccountDeps,
  actor: Actor,
  created: ServiceAccount,
  auditError: unknown,
): Promise<void> {
  const context = {
    tenant: actor.tenant,
    client_id: created.client_id,
    err: { message: (auditError as Error)?.message },
  };
  try {
    await deps.tokenService.deleteServiceAccount(actor.tenant, created.client_id);
    deps.logger.warn(
      context,
      'audit event could not be written; the created service account was deleted again',
    );
  } catch (err) {
    // The secret was never shown, so the account cannot be used; an operator deletes it.
    deps.onAuditWriteFailure?.();
    deps.logger.error(
      { ...context, compensationError: { message: (err as Error)?.message } },
      'audit event could not be written and the created service account could not be deleted',
    );
  }
}

export async function listServiceAccounts(
  deps: ServiceAccountDeps,
  actor: Actor,
): Promise<ServiceAccount[]> {
  return deps.tokenService.listServiceAccounts(actor.tenant);
}

export async function getServiceAccount(
  deps: ServiceAccountDeps,
  actor: Actor,
  clientId: string,
): Promise<ServiceAccount> {
  assertClientId(clientId);
  return deps.tokenService.getServiceAccount(actor.tenant, clientId);
}

/**
 * Changes the role, grants and/or the DPoP requirement (older tokens revoked), whether it may
 * receive signals, and/or the account's own grant quota (revokes nothing; a policy change, so it needs a recent second
 * factor); one audit event records each change as from/to.
 */
export async function updateServiceAccount(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
  input: UpdateServiceAccountInput,
): Promise<ServiceAccount> {
  assertCanManage(actor);
  assertClientId(clientId);
  if (input.quota !== undefined) assertRecentFactor(actor, 'change-quota');
  const change = accountChangeOf(input);
  const before = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  let updated = before;
  if (Object.keys(change).length > 0)
    updated = await deps.tokenService.updateServiceAccount(
      actor.tenant,
      clientId,
      change,
      actorLabel(actor),
    );
  if (input.quota !== undefined)
    updated = await deps.tokenService.setQuota(
      actor.tenant,
      clientId,
      input.quota === null ? null : { per_minute: input.quota.per_minute, mode: input.quota.mode },
      actorLabel(actor),
    );
  await recordIrreversible(
    deps,
    auditEvent(
      actor,
      meta,
      'service_account.update',
      updated,
      changeDetails(before, updated, input),
    ),
  );
  return updated;
}

function accountChangeOf(input: UpdateServiceAccountInput): ServiceAccountChange {
  const change: ServiceAccountChange = {};
  if (input.role !== undefined) change.role = input.role;
  if (input.grants !== undefined)
    change.grants = input.grants.map((g) => ({ tag: g.tag, permission: g.permission }));
  if (input.dpop_bound_access_tokens !== undefined)
    change.dpop_bound_access_tokens = input.dpop_bound_access_tokens;
  if (input.receive_signals !== undefined) change.receive_signals = input.receive_signals;
  return change;
}

function changeDetails(
  before: ServiceAccount,
  updated: ServiceAccount,
  input: UpdateServiceAccountInput,
): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  if (input.role !== undefined) details.role = { from: before.role, to: updated.role };
  if (input.grants !== undefined)
    details.grants = {
      from: before.grants.map((g) => g.tag),
      to: updated.grants.map((g) => g.tag),
    };
  if (input.dpop_bound_access_tokens !== undefined)
    details.dpop_bound_access_tokens = {
      from: before.dpop_bound_access_tokens,
      to: updated.dpop_bound_access_tokens,
    };
  if (input.receive_signals !== undefined)
    details.receive_signals = { from: before.receive_signals, to: updated.receive_signals };
  if (input.quota !== undefined) details.quota = { from: before.quota, to: updated.quota };
  return details;
}

/** A new secret (the old one stops working); returned even when the audit event could not be written. */
export async function resetServiceAccountSecret(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
): Promise<ServiceAccountWithSecret> {
  assertCanManage(actor);
  assertRecentFactor(actor, 'reset-secret');
  assertClientId(clientId);
  const reset = await deps.tokenService.resetSecret(actor.tenant, clientId, actorLabel(actor));
  await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.reset_secret', reset));
  return reset;
}

/**
 * Disable (its tokens are refused at their next check, no credential works) or enable. A
 * disable is final for the tokens it revoked, so its event is retried; an enable grants
 * access again, so it is undone when the trail cannot record it. Asking for the state the
 * account has changes nothing and records nothing.
 */
export async function setServiceAccountDisabled(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
  disabled: boolean,
): Promise<ServiceAccount> {
  assertCanManage(actor);
  assertClientId(clientId);
  const before = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  if (before.disabled === disabled) return before;
  const after = await deps.tokenService.setDisabled(
    actor.tenant,
    clientId,
    disabled,
    actorLabel(actor),
  );
  const event = auditEvent(
    actor,
    meta,
    disabled ? 'service_account.disable' : 'service_account.enable',
    after,
  );
  if (disabled) await recordIrreversible(deps, event);
  else
    await recordOrUndo(deps, event, () =>
      deps.tokenService.setDisabled(actor.tenant, clientId, true, actorLabel(actor)),
    );
  return after;
}

export async function deleteServiceAccount(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
): Promise<void> {
  assertCanManage(actor);
  assertRecentFactor(actor, 'delete-service-account');
  assertClientId(clientId);
  // Read first: the audit trail names what was deleted, and an unknown id is a 404 before any change.
  const existing = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  await deps.tokenService.deleteServiceAccount(actor.tenant, clientId);
  await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.delete', existing));
}
