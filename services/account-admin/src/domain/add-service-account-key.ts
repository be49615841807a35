import type { ServiceAccountKey } from '@plant/shared';
import { actorLabel, assertCanManage, type Actor, type RequestMeta } from './actor.js';
import type { AddKeyInput } from './credential-validators.js';
import { assertClientId, auditEvent, recordOrUndo, type ServiceAccountDeps } from './service-accounts.js';

/** A public key for private_key_jwt; audited, or removed again when the audit trail cannot take it. */
export async function addServiceAccountKey(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string, input: AddKeyInput): Promise<ServiceAccountKey> {
  assertCanManage(actor);
  assertClientId(clientId);
  const account = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  const key = await deps.tokenService.addKey(actor.tenant, clientId, input.jwk !== undefined ? { jwk: input.jwk } : { pem: input.pem! }, actorLabel(actor));
  const details = { key: { id: key.id, alg: key.alg, thumbprint: key.thumbprint } };
  await recordOrUndo(deps, auditEvent(actor, meta, 'service_account.key_add', account, details), () => deps.tokenService.removeKey(actor.tenant, clientId, key.id));
  return key;
}
