/**
 * The step-up (and the portal's enrolments) from a realm session: a sign-in started while the
 * realm's session names a person (the portal's `max_age=0`, `acr_values`, `plant_action`) asks
 * only what that person still needs, starting with a factor they hold. Whether the
 * authorization asks for a sign-in at all is sign-in-policy.ts; whether it starts here rather
 * than at the password form, `stepUpPerson` (with `nextStep`, second-factors/second-factors.ts);
 * what is asked, `advance` (next-step.ts).
 */
import { type SignInPerson, AMR, hasSecondFactor, nextStep } from '../second-factors/index.js';
import { advance } from './next-step.js';
import type { SignInContext, StepResult } from './sign-in-flow.js';
import { actionOf } from './sign-in-state.js';

/**
 * The person a step-up is for, or undefined when a full sign-in is due instead: no session,
 * nothing but the password to ask for, or a person without a factor, whose enrolment (asked
 * for, or required by the policy) needs the password again: a session alone, perhaps someone
 * else's browser, never chooses the account's second factor.
 */
async function stepUpPerson(ctx: SignInContext): Promise<SignInPerson | undefined> {
  const { loaded } = ctx;
  const session = loaded.details.session;
  if (session?.accountId === undefined) return undefined;
  const person = await ctx.deps.factors.identity.userFactors.person(
    loaded.tenant,
    session.accountId,
  );
  if (!person || person.disabled || !hasSecondFactor(person)) return undefined;
  if (nextStep(person, actionOf(loaded)) === 'finish') return undefined;
  return person;
}

/** A session's person with something left to verify starts at that, not at the password form. */
export async function startStepUp(ctx: SignInContext): Promise<StepResult> {
  const person = await stepUpPerson(ctx);
  if (!person) return undefined;
  const { loaded } = ctx;
  ctx.next = {
    sub: person.sub,
    amr: loaded.details.session?.amr ?? [...AMR.password],
    factorVerified: false,
    step: 'factor',
    action: actionOf(loaded),
  };
  return advance(ctx);
}
