/**
 * The password form and its POST: the first step of a sign-in. A form this service issued is
 * let in or refused at its door before its interaction is read or a password is checked
 * (docs/decisions/0023-sign-in-refused-at-its-door.md): a storm of wrong passwords is mostly
 * refusals, and each should cost the door and a page made from the request.
 *
 * 1. a form this service did not issue is answered as any other POST (the interaction's answer);
 * 2. the door: a password checker held, then the source's point (`admitSignIn`);
 * 3. the interaction read (the held checker let go when it cannot be);
 * 4. the password checked (`authenticateUser`: the account's budget, then the hash);
 * 5. what the person must do next (`advance`, next-step.ts).
 */
import type { Request, Response } from 'express';
import {
  abandonSignIn,
  admitSignIn,
  authenticateUser,
  type SignInAdmitted,
  type SignInBusy,
  type SignInDeps,
  type SignInThrottled,
} from './authenticate-user.js';
import {
  authenticationOptions,
  type PasskeyDeps,
  AMR,
  passkeyForm,
} from '../second-factors/index.js';
import type { InteractionKit, LoadedInteraction } from './interaction-kit.js';
import { advance } from './next-step.js';
import { BUSY, PASSWORD_MAX } from '../passwords/index.js';
import {
  EMAIL_MAX,
  pausedMessage,
  signInFormPage,
  WRONG_CREDENTIALS,
  type FormState,
} from './sign-in-form.js';
import {
  ANSWERED,
  flow,
  SignInContext,
  type SignInEnv,
  type Step,
  type StepResult,
} from './sign-in-flow.js';
import { actionOf, ttlOf } from './sign-in-state.js';

/** The password form of `loaded`, with a discoverable passkey's challenge for this sign-in. */
export async function passwordForm(
  kit: InteractionKit,
  passkeys: PasskeyDeps,
  loaded: LoadedInteraction,
  state: FormState = {},
): Promise<string> {
  const { tenant, uid } = loaded;
  const csrf = kit.csrfFor(tenant, uid);
  const options = await authenticationOptions(passkeys, {
    tenant,
    interaction: uid,
    ttlSeconds: ttlOf(loaded),
  });
  const passkey = passkeyForm(
    { tenant, uid, csrf },
    'authenticate',
    'passkey',
    options,
    // Not "Sign in …": the password form's own button keeps that name to itself.
    'Use a passkey',
    false,
  );
  return signInFormPage(tenant, uid, csrf, { ...state, passkey });
}

/**
 * The form's fields cut to their limits, and whether its CSRF field is the one this service
 * issued (then `csrf` is that field, which a page made from the request echoes).
 */
function readSignInForm(kit: InteractionKit, req: Request) {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const email = typeof body.email === 'string' ? body.email.trim().slice(0, EMAIL_MAX) : '';
  const password = typeof body.password === 'string' ? body.password.slice(0, PASSWORD_MAX) : '';
  const [tenant, uid] = [String(req.params.tenant), String(req.params.uid)];
  const csrfValid = kit.csrfValid(req);
  const csrf = csrfValid ? String(body.csrf) : '';
  return { tenant, uid, email, password, csrf, csrfValid };
}

/** A password POST: its form, read first, and what the door let in. */
class PasswordContext extends SignInContext {
  readonly form: ReturnType<typeof readSignInForm>;
  #admission: SignInAdmitted | undefined;

  constructor(
    req: Request,
    res: Response,
    env: SignInEnv,
    readonly signIn: SignInDeps,
  ) {
    super(req, res, env);
    this.form = readSignInForm(env.kit, req);
  }
  get admission(): SignInAdmitted {
    if (!this.#admission) throw new Error('sign-in step read the admission before the door');
    return this.#admission;
  }
  set admission(admission: SignInAdmitted) {
    this.#admission = admission;
  }
}

/**
 * 429: the password form again, with why and when to come back. The same answer for every
 * refusal (every checker busy, the source's or the account's budget spent), made from the
 * request alone: it needs the interaction neither read nor written (no passkey challenge:
 * the sign-in's page, linked, makes one), so a storm's refusals cost their door and this.
 */
function sendRefusal(ctx: PasswordContext, refusal: SignInBusy | SignInThrottled): typeof ANSWERED {
  const { tenant, uid, email, csrf } = ctx.form;
  const error = refusal.kind === 'busy' ? BUSY : pausedMessage(refusal.retryAfterSeconds);
  ctx.kit.sendRefusalPage(
    ctx.res,
    refusal.retryAfterSeconds,
    signInFormPage(tenant, uid, csrf, {
      email,
      error,
      passkeyPage: `/realms/${tenant}/interaction/${uid}`,
    }),
  );
  return ANSWERED;
}

/** 1. A form this service did not issue is answered as before (unknown realm, expired, not valid). */
async function answerForeignForm(ctx: PasswordContext): Promise<StepResult> {
  if (ctx.form.csrfValid) return undefined;
  await ctx.kit.loadPost(ctx.req, ctx.res);
  return ANSWERED;
}

/**
 * 2. A form this service issued (its CSRF field, bound to the realm and the sign-in's id) is
 * let in or refused before its interaction is read: no Redis when every checker is busy, one
 * round trip when the source's budget is spent.
 */
async function admitAtDoor(ctx: PasswordContext): Promise<StepResult> {
  const admission = await admitSignIn(ctx.signIn, ctx.req.ip ?? '');
  if (admission.kind !== 'admitted') return sendRefusal(ctx, admission);
  ctx.admission = admission;
  return undefined;
}

/** 3. The interaction; the checker the door held is let go when there is none to sign in to. */
async function loadAdmittedInteraction(ctx: PasswordContext): Promise<StepResult> {
  let loaded: LoadedInteraction | undefined;
  try {
    loaded = await ctx.kit.loadPost(ctx.req, ctx.res);
  } catch (err) {
    await abandonSignIn(ctx.signIn, ctx.admission);
    throw err;
  }
  if (!loaded) {
    await abandonSignIn(ctx.signIn, ctx.admission);
    return ANSWERED;
  }
  ctx.loaded = loaded;
  return undefined;
}

/** 4. The password checked on the held checker; a right one makes the person known. */
async function checkPassword(ctx: PasswordContext): Promise<StepResult> {
  const { tenant, email, password } = ctx.form;
  const outcome = await authenticateUser(ctx.signIn, ctx.admission, { tenant, email, password });
  if (outcome.kind === 'throttled') return sendRefusal(ctx, outcome);
  if (outcome.kind === 'wrong-credentials') {
    const { kit, deps, loaded } = ctx;
    const state = { email, error: WRONG_CREDENTIALS, invalid: true };
    kit.sendPage(ctx.res, 401, await passwordForm(kit, deps.passkeys, loaded, state));
    return ANSWERED;
  }
  ctx.next = {
    sub: outcome.accountId,
    amr: [...AMR.password],
    factorVerified: false,
    step: 'factor',
    action: actionOf(ctx.loaded),
  };
  return undefined;
}

/**
 * 5. What the person must do next. A function declaration, read when a sign-in runs: next-step.ts
 * reaches this module back through the second-factors wing, so `advance` is not yet initialised
 * while this module loads when next-step.ts is the first module imported.
 */
function askNext(ctx: PasswordContext): StepResult | Promise<StepResult> {
  return advance(ctx);
}

const passwordSteps: Step<PasswordContext> = flow<PasswordContext>(
  answerForeignForm,
  admitAtDoor,
  loadAdmittedInteraction,
  checkPassword,
  askNext, // 5.
);

/** POST …/login: the password form. */
export function postPassword(env: SignInEnv, signIn: SignInDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    await passwordSteps(new PasswordContext(req, res, env, signIn));
  };
}
