import { assertCanManage, type Actor, type RequestMeta } from './actor.js';
import { assertClientId, auditEvent, recordIrreversible, type ServiceAccountDeps } from './service-accounts.js';

export async function deleteServiceAccount(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string): Promise<void> {
  assertCanManage(actor);
  assertClientId(clientId);
  // Read first: the audit trail names what was deleted, and an unknown id is a 404 before any change.
  const existing = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  await deps.tokenService.deleteServiceAccount(actor.tenant, clientId);
  await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.delete', existing));
}
