/**
 * People's second factors and the tenant's policy, as the portal and the API manage them. The
 * factors themselves live at the realm (the token service), which also records what happened
 * there; this side checks who may act, asks for a recent second factor before any change
 * (platform/step-up.ts), and writes the portal's audit event. A change at the realm cannot be taken back,
 * so its audit event is written after it with retries (`recordIrreversible`).
 */
import type { TokenServiceClient, UserFactors } from '@plant/shared/token-service-client';
import {
  type AuditRepository,
  type NewAuditEvent,
  recordIrreversible,
  type ManagementDeps,
} from '../audit/index.js';
import type { SessionStore } from '../sessions/index.js';
import {
  actorLabel,
  type Actor,
  type RequestMeta,
  NotAPerson,
  NoFactorsToReset,
  NotPeopleAdmin,
  assertRecentFactor,
} from '../platform/index.js';

export interface FactorDeps {
  tokenService: TokenServiceClient;
  audit: AuditRepository;
  logger: ManagementDeps['logger'];
  onAuditWriteFailure?: () => void;
  /**
   * The portal sessions, when the change is made here: a factor taken away ends the person's
   * sessions at once (every replica shares the store). Without it (or for a reset by the
   * operator's CLI) they end at their next request, when they re-read the person.
   */
  store?: SessionStore;
}

/** What the API and the portal say about the policy (the realm calls it require_admin_factor). */
export interface PeopleSettings {
  require_admin_second_factor: boolean;
}

/** The policy with its revision, which the API answers as its `ETag` (platform/etag.ts). */
export type PeopleSettingsState = PeopleSettings & { revision: number };

function assertPerson(actor: Actor): void {
  if (actor.type !== 'user') throw new NotAPerson();
}

function assertPeopleAdmin(actor: Actor): void {
  if (actor.type !== 'user' || actor.role !== 'Account Admin') throw new NotPeopleAdmin();
}

function event(
  actor: Actor,
  meta: RequestMeta,
  action: NewAuditEvent['action'],
  target: { id: string; name: string | null },
  details: Record<string, unknown>,
): NewAuditEvent {
  return {
    tenant: actor.tenant,
    actorSub: actor.sub,
    actorEmail: actor.email,
    actorType: actor.type,
    action,
    targetType: 'user',
    targetClientId: target.id,
    targetName: target.name,
    details,
    requestId: meta.requestId,
    address: meta.address,
  };
}

/**
 * Ends the person's portal sessions after a factor was taken away. Best effort: the change is
 * done, and each session ends at its next request anyway (it re-reads the person).
 */
async function endSessionsNow(deps: FactorDeps, tenant: string, sub: string): Promise<void> {
  try {
    await deps.store?.destroyAllForPerson(tenant, sub);
  } catch (err) {
    deps.logger.warn(
      { tenant, err: { message: (err as Error)?.message } },
      'portal sessions not ended now; they end at their next request',
    );
  }
}

/** The caller's own factors. */
export async function listMyFactors(deps: FactorDeps, actor: Actor): Promise<UserFactors> {
  assertPerson(actor);
  return deps.tokenService.listUserFactors(actor.tenant, actor.sub);
}

/**
 * Removes one of the caller's own factors: a change to how they sign in, so a recent factor is
 * asked. A factor taken away ends every session of the person, this one too (the realm's too):
 * a session that may be a thief's never outlives the factor, and where the policy requires a
 * factor the next sign-in asks the password and enrols (docs/decisions: removing the last
 * factor forces enrolment rather than being refused).
 */
export async function removeMyFactor(
  deps: FactorDeps,
  actor: Actor,
  meta: RequestMeta,
  factorId: string,
): Promise<void> {
  assertPerson(actor);
  assertRecentFactor(actor, 'remove-own-factor');
  await deps.tokenService.removeUserFactor(actor.tenant, actor.sub, factorId, actorLabel(actor));
  await recordIrreversible(
    deps,
    event(
      actor,
      meta,
      'factor.remove',
      { id: actor.sub, name: actor.email },
      { factor_id: factorId },
    ),
  );
  await endSessionsNow(deps, actor.tenant, actor.sub);
}

/** Another person's factors (an Account Admin checking who is protected). */
export async function listUserFactors(
  deps: FactorDeps,
  actor: Actor,
  userId: string,
): Promise<UserFactors> {
  assertPeopleAdmin(actor);
  return deps.tokenService.listUserFactors(actor.tenant, userId);
}

/**
 * Removes every factor of a person who lost theirs: their sessions end, the portal's and the
 * realm's (the realm moves their factor generation and token version), and their next sign-in
 * asks the password and enrols again where the policy requires it.
 */
export async function resetUserFactors(
  deps: FactorDeps,
  actor: Actor,
  meta: RequestMeta,
  userId: string,
): Promise<{ removed: number }> {
  assertPeopleAdmin(actor);
  assertRecentFactor(actor, 'reset-factors');
  // The portal does not offer it; a caller who asks anyway is told, and nothing is audited.
  const held = await deps.tokenService.listUserFactors(actor.tenant, userId);
  if (held.factors.length === 0 && held.recovery_codes_left === 0) throw new NoFactorsToReset();
  const reset = await deps.tokenService.resetUserFactors(actor.tenant, userId, actorLabel(actor));
  await recordIrreversible(
    deps,
    event(
      actor,
      meta,
      'user.factors_reset',
      { id: userId, name: null },
      { removed: reset.removed },
    ),
  );
  await endSessionsNow(deps, actor.tenant, userId);
  return reset;
}

export async function getPeopleSettings(
  deps: FactorDeps,
  actor: Actor,
): Promise<PeopleSettingsState> {
  assertPeopleAdmin(actor);
  const policy = await deps.tokenService.getFactorPolicy(actor.tenant);
  return { require_admin_second_factor: policy.require_admin_factor, revision: policy.revision };
}

/**
 * The policy changes how every Account Admin signs in: a recent factor is asked, and it is
 * audited (its target: the acting admin). Under the request's `If-Match` the token service
 * decides the change against the policy's revision, under the realm's lock.
 */
export async function updatePeopleSettings(
  deps: FactorDeps,
  actor: Actor,
  meta: RequestMeta,
  input: PeopleSettings,
): Promise<PeopleSettingsState> {
  assertPeopleAdmin(actor);
  assertRecentFactor(actor, 'update-people-settings');
  const policy = await deps.tokenService.setFactorPolicy(
    actor.tenant,
    input.require_admin_second_factor,
    actorLabel(actor),
  );
  await recordIrreversible(
    deps,
    event(
      actor,
      meta,
      'tenant.policy_change',
      { id: actor.sub, name: actor.email },
      { require_admin_second_factor: policy.require_admin_factor },
    ),
  );
  return { require_admin_second_factor: policy.require_admin_factor, revision: policy.revision };
}
