/**
 * Where the step-up requirement of a portal action is decided: the one place. SENSITIVE_ACTIONS
 * lists every sensitive action by name and what its step-up asks; each use case that performs
 * one calls `assertRecentFactor(actor, '<action>')` before it acts (the name is typed as the
 * table's keys, so an action the table does not list does not compile), and the suite checks
 * that the table lists exactly the actions the code asks about and that each is refused without
 * a recent factor (test/sensitive-actions.test.ts).
 *
 * The rule: a person who needs a second factor must have verified one in the last
 * STEP_UP_MAX_AGE_SECONDS, so a stolen session cookie (or token) alone changes nothing; the
 * refusal is StepUpRequired, RFC 9470's challenge (errors.ts). The factor is verified at the
 * realm (the portal never sees it); `actor.factorAt` is the `auth_time` of the realm's last
 * sign-in with acr factor, and `actor.stepUpRequired` says the person has a factor (both set
 * where the actor is made: a portal session's sign-in or step-up, sessions/portal-sessions.ts;
 * a bearer token's `acr`/`auth_time`, sessions/authenticate.ts). The realm's side of step-up (when a sign-in asks the factor again)
 * is decided in the token service's sign-in/sign-in-policy.ts.
 */
import type { Actor } from './actor.js';
import { STEP_UP_MAX_AGE_SECONDS, StepUpRequired } from './errors.js';

/** What a sensitive action's step-up asks. */
interface StepUpRule {
  /** A second factor verified in the last STEP_UP_MAX_AGE_SECONDS (when the person needs one). */
  readonly recentFactor: boolean;
}

/**
 * Every sensitive action, named as its use case asks about it (use case, route under /api/v1).
 * Checked after the role check and before anything else is asked of the token service.
 */
export const SENSITIVE_ACTIONS = {
  /** createServiceAccount: POST /service-accounts. */
  'create-service-account': { recentFactor: true },
  /** updateServiceAccount with a `quota`: PATCH /service-accounts/{id} (a policy change). */
  'change-quota': { recentFactor: true },
  /** resetServiceAccountSecret: POST /service-accounts/{id}/reset-secret. */
  'reset-secret': { recentFactor: true },
  /** deleteServiceAccount: DELETE /service-accounts/{id}. */
  'delete-service-account': { recentFactor: true },
  /** addServiceAccountKey: POST /service-accounts/{id}/keys. */
  'add-key': { recentFactor: true },
  /** addServiceAccountTrust: POST /service-accounts/{id}/trusts. */
  'add-trust': { recentFactor: true },
  /** setDelegations: PUT /service-accounts/{id}/delegations (it grants acting for others). */
  'change-delegations': { recentFactor: true },
  /** addServiceAccountSecret: POST /service-accounts/{id}/secrets. */
  'add-secret': { recentFactor: true },
  /** updateCredentialPolicy: PATCH /settings/credentials. */
  'update-credential-policy': { recentFactor: true },
  /** invitePerson: POST /users. */
  invite: { recentFactor: true },
  /** changePerson: PATCH /users/{id}. */
  'change-person': { recentFactor: true },
  /** removePerson: DELETE /users/{id}. */
  'remove-person': { recentFactor: true },
  /** revokeInvitation: DELETE /invitations/{id}. */
  'revoke-invitation': { recentFactor: true },
  /** signOutEverywhere: DELETE /users/{id}/sessions. */
  'sign-out-everywhere': { recentFactor: true },
  /** resetUserFactors: DELETE /users/{id}/factors. */
  'reset-factors': { recentFactor: true },
  /** removeMyFactor: DELETE /me/factors/{factor_id}. */
  'remove-own-factor': { recentFactor: true },
  /** updatePeopleSettings: PATCH /settings/people (the admin second-factor policy). */
  'update-people-settings': { recentFactor: true },
} as const satisfies Record<string, StepUpRule>;

/** A sensitive action's name: one of SENSITIVE_ACTIONS' keys. */
export type SensitiveAction = keyof typeof SENSITIVE_ACTIONS;

/** Whether the person verified a second factor recently enough, or needs none. */
export function hasRecentFactor(actor: Actor, now = Date.now()): boolean {
  if (actor.stepUpRequired !== true) return true;
  return actor.factorAt !== undefined && now - actor.factorAt <= STEP_UP_MAX_AGE_SECONDS * 1000;
}

/** StepUpRequired when `action` asks for a recent factor the actor has not verified. */
export function assertRecentFactor(actor: Actor, action: SensitiveAction, now = Date.now()): void {
  const rule: StepUpRule = SENSITIVE_ACTIONS[action];
  if (rule.recentFactor && !hasRecentFactor(actor, now)) throw new StepUpRequired();
}

/**
 * Whether the person has a second factor, as the token service's user view counts them
 * (`factors`); a view without the counts (an older token service) says no.
 */
export function hasSecondFactor(user: object): boolean {
  const factors = (user as { factors?: { passkeys?: unknown; totp?: unknown } }).factors;
  return (
    factors !== undefined &&
    ((typeof factors.passkeys === 'number' && factors.passkeys > 0) || factors.totp === true)
  );
}
