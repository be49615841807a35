import type { ServiceAccountTrust } from '@plant/shared';
import { actorLabel, assertCanManage, type Actor, type RequestMeta } from './actor.js';
import type { AddTrustInput } from './credential-validators.js';
import { assertClientId, auditEvent, recordOrUndo, type ServiceAccountDeps } from './service-accounts.js';

/** A trusted workload; audited, or removed again when the audit trail cannot take it. */
export async function addServiceAccountTrust(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string, input: AddTrustInput): Promise<ServiceAccountTrust> {
  assertCanManage(actor);
  assertClientId(clientId);
  const account = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  const trust = await deps.tokenService.addTrust(actor.tenant, clientId, { issuer: input.issuer, subject: input.subject, audience: input.audience }, actorLabel(actor));
  const details = { trust: { id: trust.id, issuer: trust.issuer, subject: trust.subject, audience: trust.audience } };
  await recordOrUndo(deps, auditEvent(actor, meta, 'service_account.trust_add', account, details), () => deps.tokenService.removeTrust(actor.tenant, clientId, trust.id));
  return trust;
}
