/**
 * Enrolment within a sign-in (the policy's, or the portal's `plant_action`): the enrolment
 * page, an authenticator app confirmed by its first code, a passkey registered, and the
 * "continue" after recovery codes were shown once.
 */
import {
  type SignInPerson,
  finishRegistration,
  registrationOptions,
  AMR,
  confirmTotpEnrolment,
  mustEnrol,
  pendingTotp,
  startTotpEnrolment,
  CODE_MAX,
  enrolPage,
  PASSKEY_RESPONSE_MAX,
} from '../second-factors/index.js';
import { StaleFactorGeneration } from '../platform/index.js';
import { advance, showNewCodes } from './next-step.js';
import {
  atStep,
  field,
  livePerson,
  loadPostedForm,
  refuseStale,
  save,
  target,
} from './shared-steps.js';
import {
  ANSWERED,
  endpoint,
  type SignInContext,
  type SignInEnv,
  type StepResult,
} from './sign-in-flow.js';
import { ttlOf, union, type SignInState } from './sign-in-state.js';

/** The enrolment page: a passkey's registration and/or a new app secret, as asked. */
export async function enrolPageFor(
  ctx: SignInContext,
  person: SignInPerson,
  state: SignInState,
  error?: string,
): Promise<string> {
  const { loaded } = ctx;
  const passkeyOptions =
    state.action === 'enrol-totp'
      ? undefined
      : await registrationOptions(ctx.deps.passkeys, {
          tenant: loaded.tenant,
          interaction: loaded.uid,
          ttlSeconds: ttlOf(loaded),
          sub: person.sub,
          email: person.email,
        });
  let totp: { secret: string; uri: string } | undefined;
  if (state.action !== 'enrol-passkey' && !person.totp) {
    const base = { tenant: loaded.tenant, email: person.email, interaction: loaded.uid };
    // A wrong code shows the same secret again (the app already holds it); a new page, a new secret.
    const pending =
      error !== undefined && state.totpSealed !== undefined
        ? pendingTotp(ctx.deps.factors, { ...base, sealed: state.totpSealed })
        : startTotpEnrolment(ctx.deps.factors, base);
    await save(ctx, { ...state, totpSealed: pending.sealed });
    totp = { secret: pending.secret, uri: pending.uri };
  }
  return enrolPage(target(ctx), {
    required: mustEnrol(person),
    ...(passkeyOptions && { passkeyOptions }),
    ...(totp && { totp }),
    ...(error !== undefined && { error }),
  });
}

/** An enrolment, refused (and answered) when a factor was taken away since the sign-in began. */
async function enrolling<T>(ctx: SignInContext, enrol: () => Promise<T>): Promise<T | undefined> {
  try {
    return await enrol();
  } catch (err) {
    if (!(err instanceof StaleFactorGeneration)) throw err;
    refuseStale(ctx);
    return undefined;
  }
}

/** An app's code is confirmed only against the secret this sign-in's page showed. */
function hasPendingTotp(ctx: SignInContext): StepResult {
  if (ctx.state.totpSealed !== undefined) return undefined;
  ctx.kit.sendInvalidForm(ctx.res, ctx.loaded.tenant);
  return ANSWERED;
}

/** The app's first code confirms it; the new recovery codes are shown once, an app already there goes on. */
async function confirmTotp(ctx: SignInContext): Promise<StepResult> {
  const { loaded, state, person, req } = ctx;
  const outcome = await enrolling(ctx, () =>
    confirmTotpEnrolment(ctx.deps.factors, {
      tenant: loaded.tenant,
      sub: person.sub,
      email: person.email,
      ip: req.ip ?? '',
      interaction: loaded.uid,
      sealed: state.totpSealed!,
      code: field(req, 'code', CODE_MAX),
      generation: state.factorGeneration ?? person.factorGeneration,
    }),
  );
  if (!outcome) return ANSWERED;
  if (outcome.kind === 'wrong') {
    const error =
      'That code does not match the key. Check the app shows this account, and try the next code.';
    ctx.kit.sendPage(ctx.res, 400, await enrolPageFor(ctx, person, state, error));
    return ANSWERED;
  }
  const done: SignInState = {
    ...state,
    totpSealed: undefined,
    factorVerified: true,
    amr: union(state.amr, ['otp', 'mfa']),
  };
  if (outcome.kind !== 'exists') return showNewCodes(ctx, done, outcome.recoveryCodes);
  ctx.next = { ...done, action: undefined };
  return undefined;
}

/** The passkey's registration verified and stored (at the sign-in's factor generation). */
async function registerPasskey(ctx: SignInContext): Promise<StepResult> {
  const { loaded, state, person, req } = ctx;
  const outcome = await enrolling(ctx, () =>
    finishRegistration(ctx.deps.passkeys, {
      tenant: loaded.tenant,
      interaction: loaded.uid,
      sub: person.sub,
      email: person.email,
      ip: req.ip ?? '',
      response: field(req, 'response', PASSKEY_RESPONSE_MAX),
      generation: state.factorGeneration ?? person.factorGeneration,
    }),
  );
  if (!outcome) return ANSWERED;
  if (outcome.kind === 'refused') {
    const error = 'The passkey could not be added. Try again.';
    ctx.kit.sendPage(ctx.res, 400, await enrolPageFor(ctx, person, state, error));
    return ANSWERED;
  }
  ctx.next = {
    ...state,
    totpSealed: undefined,
    factorVerified: true,
    amr: union(state.amr, AMR.passkey),
    action: state.action === 'enrol-passkey' ? undefined : state.action,
  };
  return undefined;
}

/** After the recovery codes were shown: what was asked is done. */
function codesSeen(ctx: SignInContext): StepResult {
  ctx.next = { ...ctx.state, action: undefined };
  return undefined;
}

/** POST …/enrol-totp: the first code of a new authenticator app. */
export const postEnrolTotp = (env: SignInEnv) =>
  endpoint(env, loadPostedForm, atStep('enrol'), livePerson, hasPendingTotp, confirmTotp, advance);

/** POST …/enrol-passkey: a new passkey's registration. */
export const postEnrolPasskey = (env: SignInEnv) =>
  endpoint(env, loadPostedForm, atStep('enrol'), livePerson, registerPasskey, advance);

/** POST …/continue: on from the recovery codes page (no person read: advance reads them). */
export const postContinue = (env: SignInEnv) =>
  endpoint(env, loadPostedForm, atStep('codes-shown'), codesSeen, advance);
