import type { ServiceAccount } from '@plant/shared';
import { actorLabel, assertCanManage, type Actor, type RequestMeta } from './actor.js';
import { assertClientId, auditEvent, recordIrreversible, recordOrUndo, type ServiceAccountDeps } from './service-accounts.js';

/**
 * Disable (its tokens are refused at their next check, no credential works) or enable. A
 * disable is final for the tokens it revoked, so its event is retried; an enable grants
 * access again, so it is undone when the trail cannot record it. Asking for the state the
 * account has changes nothing and records nothing.
 */
export async function setServiceAccountDisabled(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string, disabled: boolean): Promise<ServiceAccount> {
  assertCanManage(actor);
  assertClientId(clientId);
  const before = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  if (before.disabled === disabled) return before;
  const after = await deps.tokenService.setDisabled(actor.tenant, clientId, disabled, actorLabel(actor));
  const event = auditEvent(actor, meta, disabled ? 'service_account.disable' : 'service_account.enable', after);
  if (disabled) await recordIrreversible(deps, event);
  else await recordOrUndo(deps, event, () => deps.tokenService.setDisabled(actor.tenant, clientId, true, actorLabel(actor)));
  return after;
}
