import type { ServiceAccount, ServiceAccountChange } from '@plant/shared';
import { actorLabel, assertCanManage, type Actor, type RequestMeta } from './actor.js';
import type { UpdateServiceAccountInput } from './service-account-validators.js';
import { assertClientId, auditEvent, recordIrreversible, type ServiceAccountDeps } from './service-accounts.js';

/** Changes the role, grants and/or the DPoP requirement; the audit event records each change as from/to. */
export async function updateServiceAccount(deps: ServiceAccountDeps, actor: Actor, meta: RequestMeta, clientId: string, input: UpdateServiceAccountInput): Promise<ServiceAccount> {
  assertCanManage(actor);
  assertClientId(clientId);
  const change: ServiceAccountChange = {};
  if (input.role !== undefined) change.role = input.role;
  if (input.grants !== undefined) change.grants = input.grants.map((g) => ({ tag: g.tag, permission: g.permission }));
  if (input.dpop_bound_access_tokens !== undefined) change.dpop_bound_access_tokens = input.dpop_bound_access_tokens;
  const before = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  const updated = await deps.tokenService.updateServiceAccount(actor.tenant, clientId, change, actorLabel(actor));
  const details: Record<string, unknown> = {};
  if (change.role !== undefined) details.role = { from: before.role, to: updated.role };
  if (change.grants !== undefined) details.grants = { from: before.grants.map((g) => g.tag), to: updated.grants.map((g) => g.tag) };
  if (change.dpop_bound_access_tokens !== undefined) details.dpop_bound_access_tokens = { from: before.dpop_bound_access_tokens, to: updated.dpop_bound_access_tokens };
  await recordIrreversible(deps, auditEvent(actor, meta, 'service_account.update', updated, details));
  return updated;
}
