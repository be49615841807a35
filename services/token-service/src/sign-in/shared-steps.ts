/**
 * The steps and answers every sign-in flow shares: reading the posted form's interaction and
 * state, the live person, saving the state, and the pages that end a sign-in.
 */
import type { Request } from 'express';
import type { FormTarget } from '../second-factors/index.js';
import type { LoadedInteraction } from './interaction-kit.js';
import { ANSWERED, type SignInContext, type Step, type StepResult } from './sign-in-flow.js';
import { stateOf, type SignInState } from './sign-in-state.js';

/** Where a step's page posts to, with the CSRF field of its interaction. */
export function target(ctx: SignInContext): FormTarget {
  const { tenant, uid } = ctx.loaded;
  return { tenant, uid, csrf: ctx.kit.csrfFor(tenant, uid) };
}

const pagePath = (loaded: LoadedInteraction) =>
  `/realms/${loaded.tenant}/interaction/${loaded.uid}`;

/** Writes the sign-in's progress into its interaction (never as a `login` result). */
export async function save(ctx: SignInContext, state: SignInState): Promise<void> {
  await ctx.loaded.provider.interactionResult(
    ctx.req,
    ctx.res,
    { plant: state },
    {
      mergeWithLastSubmission: false,
    },
  );
}

/** Saves the state and shows its page (a GET, so a reload asks nothing twice). */
export async function goTo(ctx: SignInContext, state: SignInState): Promise<typeof ANSWERED> {
  await save(ctx, state);
  ctx.res.redirect(303, pagePath(ctx.loaded));
  return ANSWERED;
}

/** A person disabled or removed since the sign-in began ends it: no step goes on for them. */
export function refuseDisabled(ctx: SignInContext): typeof ANSWERED {
  ctx.kit.sendEnd(
    ctx.res,
    403,
    ctx.loaded.tenant,
    'This account cannot sign in',
    'Your access to this Plant Store tenant is disabled or was removed. Ask an Account Admin of the tenant.',
  );
  return ANSWERED;
}

/** Factors taken away since the sign-in began void it (the 409 page): it starts again. */
export function refuseStale(ctx: SignInContext): typeof ANSWERED {
  ctx.kit.sendEnd(
    ctx.res,
    409,
    ctx.loaded.tenant,
    'Start signing in again',
    'The second factors of this account changed while you were signing in. Start again from the Plant Store portal.',
  );
  return ANSWERED;
}

/** A POST's interaction: its CSRF field valid and the sign-in still asking who it is; otherwise answered. */
export async function loadPostedForm(ctx: SignInContext): Promise<StepResult> {
  const loaded = await ctx.kit.loadPost(ctx.req, ctx.res);
  if (!loaded) return ANSWERED;
  ctx.loaded = loaded;
  return undefined;
}

/** A form of a sign-in whose state is at `step` (a form of another step is not valid here). */
export function atStep(step: SignInState['step']): Step<SignInContext> {
  return function stateAtStep(ctx) {
    const state = stateOf(ctx.loaded);
    if (state?.step !== step) {
      ctx.kit.sendInvalidForm(ctx.res, ctx.loaded.tenant);
      return ANSWERED;
    }
    ctx.state = state;
    return undefined;
  };
}

/**
 * The live person of the sign-in, at the factor generation it began with: a disabled or
 * removed person, or one whose factors changed since, ends the sign-in here.
 */
export async function livePerson(ctx: SignInContext): Promise<StepResult> {
  const { state } = ctx;
  const person = await ctx.deps.factors.identity.userFactors.person(ctx.loaded.tenant, state.sub);
  if (!person || person.disabled) return refuseDisabled(ctx);
  if (state.factorGeneration !== undefined && state.factorGeneration !== person.factorGeneration)
    return refuseStale(ctx);
  ctx.person = person;
  return undefined;
}

/** A posted field, cut to its limit ('' when absent). */
export const field = (req: Request, name: string, max: number) => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.slice(0, max) : '';
};

/** 429: `page`, with when to come back. */
export function sendThrottled(
  ctx: SignInContext,
  page: string,
  retryAfterSeconds: number,
): typeof ANSWERED {
  ctx.res.setHeader('retry-after', String(retryAfterSeconds));
  ctx.kit.sendPage(ctx.res, 429, page);
  return ANSWERED;
}
