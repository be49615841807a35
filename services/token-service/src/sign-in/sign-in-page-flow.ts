/**
 * GET of a realm's interaction: the page the sign-in is at. In order:
 * 1. the interaction read (unknown realm, expired: answered);
 * 2. a prompt other than `login` (consent) is refused, never prompted;
 * 3. a sign-in in progress shows its step's page;
 * 4. a realm session's person with something left to verify starts there (step-up-flow.ts);
 * 5. otherwise the password form.
 */
import { continuePage } from '../second-factors/index.js';
import { enrolPageFor } from './enrolment-step.js';
import { passwordForm } from './password-step.js';
import { factorPageFor } from './second-factor-step.js';
import { livePerson, target } from './shared-steps.js';
import {
  ANSWERED,
  endpoint,
  flow,
  type SignInContext,
  type SignInEnv,
  type StepResult,
} from './sign-in-flow.js';
import { stateOf } from './sign-in-state.js';
import { startStepUp } from './step-up-flow.js';

/** 1. The interaction of this page, its cookie and its uid agreeing. */
async function loadInteraction(ctx: SignInContext): Promise<StepResult> {
  const loaded = await ctx.kit.load(ctx.req, ctx.res);
  if (!loaded) return ANSWERED;
  ctx.loaded = loaded;
  return undefined;
}

/** 2. Sign-in grants what the user's role allows (loadExistingGrant); asking for more is refused, never prompted. */
async function refuseBeyondLogin(ctx: SignInContext): Promise<StepResult> {
  const { provider, details } = ctx.loaded;
  if (details.prompt.name === 'login') return undefined;
  await provider.interactionFinished(
    ctx.req,
    ctx.res,
    {
      error: 'access_denied',
      error_description: 'the requested scope exceeds what this account may be granted',
    },
    { mergeWithLastSubmission: false },
  );
  return ANSWERED;
}

/** The page of the step a sign-in in progress is at, for its live person. */
async function sendStepPage(ctx: SignInContext): Promise<StepResult> {
  const { state, person, kit, res } = ctx;
  if (state.step === 'factor') kit.sendPage(res, 200, await factorPageFor(ctx, person));
  else if (state.step === 'enrol') kit.sendPage(res, 200, await enrolPageFor(ctx, person, state));
  else kit.sendPage(res, 200, continuePage(target(ctx), 'Your second factor is set up.'));
  return ANSWERED;
}

const showStep = flow<SignInContext>(livePerson, sendStepPage);

/** 3. A sign-in in progress: a reload shows its step again (a GET asks nothing twice). */
async function showSignInInProgress(ctx: SignInContext): Promise<StepResult> {
  const state = stateOf(ctx.loaded);
  if (!state) return undefined;
  ctx.state = state;
  await showStep(ctx);
  return ANSWERED;
}

/** 5. A new sign-in: the password form (and "Use a passkey"). */
async function showPasswordForm(ctx: SignInContext): Promise<StepResult> {
  const { kit, deps, loaded } = ctx;
  kit.sendPage(ctx.res, 200, await passwordForm(kit, deps.passkeys, loaded));
  return ANSWERED;
}

/** GET …/interaction/:uid. */
export const showSignInPage = (env: SignInEnv) =>
  endpoint(
    env,
    loadInteraction,
    refuseBeyondLogin,
    showSignInInProgress,
    startStepUp, // 4.
    showPasswordForm,
  );
