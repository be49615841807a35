import { assertCanManage, type Actor, type RequestMeta } from './actor.js';
import { NotFound } from '@plant/shared';
import { isKeyId, isTrustId } from './credential-validators.js';
import { assertClientId, auditEvent, recordIrreversible, type ServiceAccountDeps } from './service-accounts.js';

/** What to remove: a key, a trusted workload, or the secret. */
export type RemovedCredential = { kind: 'key'; id: string } | { kind: 'trust'; id: string } | { kind: 'secret' };

const NOT_FOUND = { key: 'Key not found', trust: 'Trust not found' } as const;

/**
 * Removes one credential; the token service revokes the tokens minted before (as a reset
 * does). The account and the credential are read first, so the audit event names them and an
 * unknown id is a 404 before any change; the event is then retried, as for every irreversible
 * action.
 */
export async function removeServiceAccountCredential(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string, removed: RemovedCredential): Promise<void> {
  assertCanManage(actor);
  assertClientId(clientId);
  if (removed.kind !== 'secret' && !(removed.kind === 'key' ? isKeyId : isTrustId)(removed.id)) throw new NotFound(NOT_FOUND[removed.kind]);
  const account = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  const { tenant } = actor;
  if (removed.kind === 'secret') {
    await deps.tokenService.removeSecret(tenant, clientId);
    await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.secret_remove', account));
    return;
  }
  const credentials = await deps.tokenService.getCredentials(tenant, clientId);
  if (removed.kind === 'key') {
    const key = credentials.keys.find((k) => k.id === removed.id);
    await deps.tokenService.removeKey(tenant, clientId, removed.id);
    await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.key_remove', account, { key: { id: removed.id, alg: key?.alg ?? null } }));
    return;
  }
  const trust = credentials.trusts.find((t) => t.id === removed.id);
  await deps.tokenService.removeTrust(tenant, clientId, removed.id);
  await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.trust_remove', account, { trust: { id: removed.id, issuer: trust?.issuer ?? null, subject: trust?.subject ?? null } }));
}
