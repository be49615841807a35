/**
 * A passkey sign-in: the second step for a known person (the factor page), or a whole sign-in
 * from the password form ("Use a passkey"). The assertion itself is verified in
 * second-factors/passkeys.ts (`finishAuthentication`); this is the flow around it.
 */
import {
  finishAuthentication,
  type PasskeyAuthentication,
  PASSKEY_REFUSED,
  PASSKEY_RESPONSE_MAX,
} from '../second-factors/index.js';
import { advance } from './next-step.js';
import { factorPageFor } from './second-factor-step.js';
import { field, livePerson, loadPostedForm } from './shared-steps.js';
import {
  ANSWERED,
  endpoint,
  type SignInContext,
  type SignInEnv,
  type StepResult,
} from './sign-in-flow.js';
import { pausedMessage } from './sign-in-form.js';
import { actionOf, stateOf, union } from './sign-in-state.js';

/** A sign-in in progress takes a passkey only at its factor step; none in progress is the form's. */
function atFactorStepIfAny(ctx: SignInContext): StepResult {
  const state = stateOf(ctx.loaded);
  if (state !== undefined && state.step !== 'factor') {
    ctx.kit.sendInvalidForm(ctx.res, ctx.loaded.tenant);
    return ANSWERED;
  }
  if (state) ctx.state = state;
  return undefined;
}

/** The assertion verified (for the sign-in's person, when one is known); refused: answered. */
async function verifyPasskey(ctx: SignInContext): Promise<StepResult> {
  const { loaded, req } = ctx;
  const state = ctx.stateIfAny;
  const outcome = await finishAuthentication(ctx.deps.passkeys, {
    tenant: loaded.tenant,
    interaction: loaded.uid,
    response: field(req, 'response', PASSKEY_RESPONSE_MAX),
    ip: req.ip ?? '',
    ...(state && { expectedSub: state.sub }),
  });
  if (outcome.kind !== 'verified') return sendPasskeyRefusal(ctx, outcome);
  ctx.next = {
    sub: outcome.sub,
    // A passkey after a password adds to it; alone it is the whole sign-in.
    amr: state ? union(state.amr, outcome.amr) : [...outcome.amr],
    factorVerified: true,
    step: 'factor',
    action: state?.action ?? actionOf(loaded),
  };
  return undefined;
}

/** A passkey that did not sign in: the page it came from again, with why. */
async function sendPasskeyRefusal(
  ctx: SignInContext,
  outcome: Exclude<PasskeyAuthentication, { kind: 'verified' }>,
): Promise<typeof ANSWERED> {
  const { res, loaded } = ctx;
  const throttled = outcome.kind === 'throttled';
  const message = throttled ? pausedMessage(outcome.retryAfterSeconds) : PASSKEY_REFUSED;
  if (throttled) res.setHeader('retry-after', String(outcome.retryAfterSeconds));
  const status = throttled ? 429 : 401;
  if (!ctx.stateIfAny) {
    await ctx.kit.sendSignInForm(res, loaded, status, message);
    return ANSWERED;
  }
  if ((await livePerson(ctx)) === ANSWERED) return ANSWERED;
  ctx.kit.sendPage(res, status, await factorPageFor(ctx, ctx.person, message.toString()));
  return ANSWERED;
}

/** POST …/passkey: a passkey, as the second factor or as the whole sign-in. */
export const postPasskey = (env: SignInEnv) =>
  endpoint(env, loadPostedForm, atFactorStepIfAny, verifyPasskey, advance);
