/**
 * What a sign-in asks next once a step verified something (a password, a code, a passkey, an
 * enrolment) or the realm's session named the person: a second factor they hold, an
 * enrolment (the policy's, or the portal's `plant_action`), new recovery codes, or the end.
 *
 *   password ─┐                     ┌─ factor (passkey / code / recovery code) ─┐
 *   passkey ──┼─ person known ──────┼─ enrol (policy or plant_action) ──────────┼─ finish
 *   realm session (step-up) ────────┘                                           │
 *                                    recovery codes shown once ─ continue ─────┘
 */
import {
  FACTOR_ACR,
  hasSecondFactor,
  mustEnrol,
  PASSWORD_ACR,
  replaceRecoveryCodes,
  continuePage,
  recoveryCodesPage,
} from '../second-factors/index.js';
import { ANSWERED, flow, type SignInContext, type StepResult } from './sign-in-flow.js';
import { goTo, livePerson, save, target } from './shared-steps.js';
import type { SignInState } from './sign-in-state.js';

/** The state a verified step chose becomes the sign-in's; every check below reads it. */
function enterNextState(ctx: SignInContext): StepResult {
  ctx.state = ctx.next;
  return undefined;
}

/** The factor generation is pinned when the sign-in first knows the person (livePerson checks it). */
function pinFactorGeneration(ctx: SignInContext): StepResult {
  ctx.state = {
    ...ctx.state,
    factorGeneration: ctx.state.factorGeneration ?? ctx.person.factorGeneration,
  };
  return undefined;
}

/** A person holding a second factor shows one before anything else. */
function askSecondFactor(ctx: SignInContext): Promise<StepResult> | StepResult {
  const { state, person } = ctx;
  if (!state.factorVerified && hasSecondFactor(person))
    return goTo(ctx, { ...state, step: 'factor' });
  return undefined;
}

/** An enrolment asked for (passkey, a first app), or due: the policy's, or codes without a factor. */
function askEnrolment(ctx: SignInContext): Promise<StepResult> | StepResult {
  const { state, person } = ctx;
  const wantsEnrolment =
    state.action === 'enrol-passkey' ||
    (state.action === 'enrol-totp' && !person.totp) ||
    (!hasSecondFactor(person) && (mustEnrol(person) || state.action === 'recovery-codes'));
  if (wantsEnrolment) return goTo(ctx, { ...state, step: 'enrol' });
  return undefined;
}

/** A second authenticator app is never set up over the first: the person is told, then goes on. */
async function refuseSecondTotp(ctx: SignInContext): Promise<StepResult> {
  const { state } = ctx;
  if (state.action !== 'enrol-totp') return undefined;
  await save(ctx, { ...state, step: 'codes-shown', action: undefined });
  ctx.kit.sendPage(
    ctx.res,
    200,
    continuePage(
      target(ctx),
      'You already have an authenticator app. Remove it on the Security page of the portal to set up another.',
    ),
  );
  return ANSWERED;
}

/** New recovery codes asked for by a person with a factor: replaced here, shown once. */
async function replaceCodes(ctx: SignInContext): Promise<StepResult> {
  const { state, person, loaded } = ctx;
  if (state.action !== 'recovery-codes') return undefined;
  const codes = await replaceRecoveryCodes(ctx.deps.factors, {
    tenant: loaded.tenant,
    sub: person.sub,
    email: person.email,
    ip: ctx.req.ip ?? null,
  });
  return showNewCodes(ctx, state, codes);
}

/** Nothing left to ask: the sign-in completes with what it verified. */
async function finish(ctx: SignInContext): Promise<StepResult> {
  const { state, loaded, person } = ctx;
  const clientId = loaded.details.params.client_id;
  await ctx.deps.factors.identity.userFactors.recordSignIn({
    realm: loaded.tenant,
    sub: state.sub,
    email: person.email,
    clientId: typeof clientId === 'string' ? clientId : null,
    amr: state.amr,
    stepUp: loaded.details.session?.accountId === state.sub,
    address: ctx.req.ip ?? null,
  });
  await loaded.provider.interactionFinished(
    ctx.req,
    ctx.res,
    {
      login: {
        accountId: state.sub,
        acr: state.factorVerified ? FACTOR_ACR : PASSWORD_ACR,
        amr: state.amr,
      },
    },
    { mergeWithLastSubmission: false },
  );
  return ANSWERED;
}

/** Shows new recovery codes (once) and waits for the person to continue. */
export async function showNewCodes(
  ctx: SignInContext,
  state: SignInState,
  codes: string[],
): Promise<typeof ANSWERED> {
  await save(ctx, { ...state, step: 'codes-shown', action: undefined });
  ctx.kit.sendPage(ctx.res, 200, recoveryCodesPage(target(ctx), codes));
  return ANSWERED;
}

/**
 * The next step for a person known to this sign-in (`ctx.next`), from what they hold and what
 * was asked. Every flow ends here; it always answers.
 */
export const advance = flow<SignInContext>(
  enterNextState,
  livePerson,
  pinFactorGeneration,
  askSecondFactor,
  askEnrolment,
  refuseSecondTotp,
  replaceCodes,
  finish,
);
