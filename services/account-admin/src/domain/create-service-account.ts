import type { ServiceAccount, ServiceAccountWithSecret } from '@plant/shared';
import { actorLabel, assertCanManage, type Actor, type RequestMeta } from './actor.js';
import { AuditUnavailable } from './errors.js';
import type { CreateServiceAccountInput } from './service-account-validators.js';
import { auditEvent, type ServiceAccountDeps } from './managed-service-accounts.js';

/** Creates the account and returns its secret, the only time it is shown; undone when the audit event cannot be written (managed-service-accounts.ts). */
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
