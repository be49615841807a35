/**
 * Step-up for sensitive actions (creating, resetting or deleting a service account, adding a key
 * or a trusted workload, every People, factor-reset, session and policy action): a person who
 * needs a second factor must have verified one in the last STEP_UP_MAX_AGE_SECONDS, so a stolen
 * session cookie alone changes nothing. The factor is verified at the realm (the portal never
 * sees it); `actor.factorAt` is the `auth_time` of the realm's last sign-in with acr factor.
 * Every sensitive use case calls `assertRecentFactor` before it acts.
 */
import type { Actor } from './actor.js';
import { STEP_UP_MAX_AGE_SECONDS, StepUpRequired } from './errors.js';

export function hasRecentFactor(actor: Actor, now = Date.now()): boolean {
  if (actor.stepUpRequired !== true) return true;
  return actor.factorAt !== undefined && now - actor.factorAt <= STEP_UP_MAX_AGE_SECONDS * 1000;
}

export function assertRecentFactor(actor: Actor, now = Date.now()): void {
  if (!hasRecentFactor(actor, now)) throw new StepUpRequired();
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
