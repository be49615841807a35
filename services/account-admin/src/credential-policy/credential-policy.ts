/**
 * The tenant's credential policy (maximum secret age, what a leak report does, the default
 * grant quota), kept by the token service, which applies it at every grant. Anyone signed in
 * to the tenant may read it; changing it needs an Account Admin with a recent second factor,
 * and is audited, or undone when the trail cannot take it (a weaker policy nobody can trace is
 * worse than a refused change).
 */
import type { CredentialPolicy, CredentialPolicyChange } from '@plant/shared/token-service-client';
import {
  actorLabel,
  assertCanManage,
  type Actor,
  type RequestMeta,
  assertRecentFactor,
} from '../platform/index.js';
import type { UpdateCredentialPolicyInput } from './credential-policy-validators.js';
import { recordOrUndo, type ManagementDeps } from '../audit/index.js';

export function getCredentialPolicy(
  deps: Pick<ManagementDeps, 'tokenService'>,
  actor: Actor,
): Promise<CredentialPolicy> {
  return deps.tokenService.getCredentialPolicy(actor.tenant);
}

function changeOf(input: UpdateCredentialPolicyInput): CredentialPolicyChange {
  const change: CredentialPolicyChange = {};
  if (input.secret_max_age_days !== undefined)
    change.secret_max_age_days = input.secret_max_age_days;
  if (input.leak_response !== undefined) change.leak_response = input.leak_response;
  if (input.default_quota !== undefined)
    change.default_quota = {
      per_minute: input.default_quota.per_minute,
      mode: input.default_quota.mode,
    };
  return change;
}

export async function updateCredentialPolicy(
  deps: ManagementDeps,
  actor: Actor,
  meta: RequestMeta,
  input: UpdateCredentialPolicyInput,
): Promise<CredentialPolicy> {
  assertCanManage(actor);
  assertRecentFactor(actor, 'update-credential-policy');
  const change = changeOf(input);
  const before = await deps.tokenService.getCredentialPolicy(actor.tenant);
  const after = await deps.tokenService.updateCredentialPolicy(
    actor.tenant,
    change,
    actorLabel(actor),
  );
  const details: Record<string, unknown> = {};
  for (const field of Object.keys(change) as (keyof CredentialPolicyChange)[])
    details[field] = { from: before[field], to: after[field] };
  await recordOrUndo(
    deps,
    {
      tenant: actor.tenant,
      actorSub: actor.sub,
      actorEmail: actor.email,
      actorType: actor.type,
      action: 'credential_policy.update',
      targetType: 'tenant',
      targetClientId: actor.tenant,
      targetName: null,
      details,
      requestId: meta.requestId,
      address: meta.address,
    },
    () =>
      deps.tokenService.updateCredentialPolicy(
        actor.tenant,
        {
          secret_max_age_days: before.secret_max_age_days,
          leak_response: before.leak_response,
          default_quota: before.default_quota,
        },
        actorLabel(actor),
      ),
  );
  return after;
}
