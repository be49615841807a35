/**
 * The second factor of a known person by code: an authenticator app's code or a recovery
 * code (second-factors/second-factors.ts `verifyCode`), and the factor page both are typed
 * into. A passkey as the second factor is passkey-step.ts.
 */
import {
  type SignInPerson,
  authenticationOptions,
  verifyCode,
  CODE_MAX,
  factorPage,
  WRONG_CODE,
} from '../second-factors/index.js';
import { advance } from './next-step.js';
import {
  atStep,
  field,
  livePerson,
  loadPostedForm,
  sendThrottled,
  target,
} from './shared-steps.js';
import {
  ANSWERED,
  type SignInContext,
  type SignInEnv,
  type StepResult,
  endpoint,
} from './sign-in-flow.js';
import { pausedMessage } from './sign-in-form.js';
import { ttlOf, union } from './sign-in-state.js';

/** The factor page: a passkey's challenge when the person has one, the code field when a code can sign in. */
export async function factorPageFor(
  ctx: SignInContext,
  person: SignInPerson,
  error?: string,
): Promise<string> {
  const { loaded } = ctx;
  const passkeyOptions =
    person.passkeys > 0
      ? await authenticationOptions(ctx.deps.passkeys, {
          tenant: loaded.tenant,
          interaction: loaded.uid,
          ttlSeconds: ttlOf(loaded),
          sub: person.sub,
        })
      : undefined;
  return factorPage(target(ctx), {
    ...(passkeyOptions && { passkeyOptions }),
    codes: person.totp || person.recoveryCodesLeft > 0,
    ...(error !== undefined && { error }),
  });
}

/** The code checked (throttled per person); a wrong or throttled one gets the factor page again. */
async function verifyPostedCode(ctx: SignInContext): Promise<StepResult> {
  const { loaded, state, person, req } = ctx;
  const outcome = await verifyCode(ctx.deps.factors, {
    tenant: loaded.tenant,
    sub: person.sub,
    email: person.email,
    ip: req.ip ?? '',
    code: field(req, 'code', CODE_MAX),
  });
  if (outcome.kind === 'throttled') {
    const page = await factorPageFor(
      ctx,
      person,
      pausedMessage(outcome.retryAfterSeconds).toString(),
    );
    return sendThrottled(ctx, page, outcome.retryAfterSeconds);
  }
  if (outcome.kind === 'wrong') {
    ctx.kit.sendPage(ctx.res, 401, await factorPageFor(ctx, person, WRONG_CODE));
    return ANSWERED;
  }
  ctx.next = {
    ...state,
    // The code's own methods: `pwd` is in the state only when a password was checked.
    amr: union(state.amr, ['otp', 'mfa']),
    factorVerified: true,
  };
  return undefined;
}

/** POST …/factor: an authenticator app's code or a recovery code. */
export const postCode = (env: SignInEnv) =>
  endpoint(env, loadPostedForm, atStep('factor'), livePerson, verifyPostedCode, advance);
