import type { ServiceAccountWithSecret } from '@plant/shared';
import { actorLabel, assertCanManage, type Actor, type RequestMeta } from './actor.js';
import { assertClientId, auditEvent, recordIrreversible, type ServiceAccountDeps } from './service-accounts.js';

/** A new secret (the old one stops working); returned even when the audit event could not be written. */
export async function resetServiceAccountSecret(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string): Promise<ServiceAccountWithSecret> {
  assertCanManage(actor);
  assertClientId(clientId);
  const reset = await deps.tokenService.resetSecret(actor.tenant, clientId, actorLabel(actor));
  await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.reset_secret', reset));
  return reset;
}
