import { keepingRequestContext, type Route } from '@plant/shared/http';
import type { Html } from '@plant/shared/page-look';
import type { Logger } from '@plant/shared/logging';
import express, { type Request, type Response } from 'express';
import {
  abandonSignIn,
  admitSignIn,
  authenticateUser,
  type SignInBusy,
  type SignInDeps,
  type SignInThrottled,
} from './authenticate-user.js';
import {
  authenticationOptions,
  type PasskeyDeps,
  type FactorDeps,
  passkeyForm,
  passkeyScriptRoutes,
} from '../second-factors/index.js';
import type { RealmProviders } from '../oidc/index.js';
import { interactionKit, type LoadedInteraction } from './interaction-kit.js';
import {
  BUSY,
  EMAIL_MAX,
  PASSWORD_MAX,
  pausedMessage,
  signInFormPage,
  WRONG_CREDENTIALS,
  type FormState,
} from './sign-in-form.js';
import { signInSteps, stateOf } from './sign-in-steps.js';

export interface InteractionDeps {
  providers: RealmProviders;
  signIn: SignInDeps;
  factors: FactorDeps;
  passkeys: PasskeyDeps;
  csrfKey: string;
  portalUrl: string;
  logger: Logger;
}

/**
 * The sign-in pages of a realm's interaction: the password form (and "Sign in with a
 * passkey"), then what sign-in-steps.ts asks (a second factor, an enrolment, recovery codes).
 * Other methods on their paths go on to the realm's mount, as before they were declared here
 * (oidc-provider answers them).
 */
export function interactionRoutes(deps: InteractionDeps): Route[] {
  const ttlOf = (loaded: LoadedInteraction) =>
    Math.max(1, loaded.details.exp - Math.floor(Date.now() / 1000));

  /** The password form of `loaded`, with a discoverable passkey's challenge for this sign-in. */
  async function formOf(loaded: LoadedInteraction, state: FormState = {}): Promise<string> {
    const { tenant, uid } = loaded;
    const csrf = kit.csrfFor(tenant, uid);
    const options = await authenticationOptions(deps.passkeys, {
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

  const kit = interactionKit({
    providers: deps.providers,
    csrfKey: deps.csrfKey,
    portalUrl: deps.portalUrl,
    signInForm: (loaded, error: string | Html) => formOf(loaded, { error }),
  });
  const steps = signInSteps(kit, {
    factors: deps.factors,
    passkeys: deps.passkeys,
    logger: deps.logger,
  });

  const base = '/realms/:tenant/interaction/:uid';

  async function showForm(req: Request, res: Response): Promise<void> {
    const loaded = await kit.load(req, res);
    if (!loaded) return;
    const { provider, details } = loaded;
    if (details.prompt.name === 'login') {
      const state = stateOf(loaded);
      if (state) return steps.showStep(req, res, loaded, state);
      if (await steps.startFromSession(req, res, loaded)) return;
      kit.sendPage(res, 200, await formOf(loaded));
      return;
    }
    // Sign-in grants what the user's role allows (loadExistingGrant); asking for more is refused, never prompted.
    await provider.interactionFinished(
      req,
      res,
      {
        error: 'access_denied',
        error_description: 'the requested scope exceeds what this account may be granted',
      },
      { mergeWithLastSubmission: false },
    );
  }

  /**
   * 429: the password form again, with why and when to come back. The same answer for every
   * refusal (every checker busy, the source's or the account's budget spent), made from the
   * request alone: it needs the interaction neither read nor written (no passkey challenge:
   * the sign-in's page, linked, makes one), so a storm's refusals cost their door and this.
   */
  function sendRefusal(
    res: Response,
    { tenant, uid, email, csrf }: { tenant: string; uid: string; email: string; csrf: string },
    refusal: SignInBusy | SignInThrottled,
  ): void {
    const error = refusal.kind === 'busy' ? BUSY : pausedMessage(refusal.retryAfterSeconds);
    kit.sendRefusalPage(
      res,
      refusal.retryAfterSeconds,
      signInFormPage(tenant, uid, csrf, {
        email,
        error,
        passkeyPage: `/realms/${tenant}/interaction/${uid}`,
      }),
    );
  }

  /**
   * The form's fields cut to their limits, and whether its CSRF field is the one this service
   * issued (then `csrf` is that field, which a page made from the request echoes).
   */
  function readSignInForm(req: Request) {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const email = typeof body.email === 'string' ? body.email.trim().slice(0, EMAIL_MAX) : '';
    const password = typeof body.password === 'string' ? body.password.slice(0, PASSWORD_MAX) : '';
    const [tenant, uid] = [String(req.params.tenant), String(req.params.uid)];
    const csrfValid = kit.csrfValid(req);
    const csrf = csrfValid ? String(body.csrf) : '';
    return { tenant, uid, email, password, csrf, csrfValid };
  }

  async function signIn(req: Request, res: Response): Promise<void> {
    const form = readSignInForm(req);
    // A form this service did not issue is answered as before (unknown realm, expired, not valid).
    if (!form.csrfValid) {
      await kit.loadPost(req, res);
      return;
    }
    // A form this service issued (its CSRF field, bound to the realm and the sign-in's id) is
    // let in or refused before its interaction is read: a storm of wrong passwords is mostly
    // refusals, and each costs the door (no Redis when every checker is busy, one round trip
    // when the source's budget is spent) and a page made from the request.
    const admission = await admitSignIn(deps.signIn, req.ip ?? '');
    if (admission.kind !== 'admitted') return sendRefusal(res, form, admission);
    let loaded: LoadedInteraction | undefined;
    try {
      loaded = await kit.loadPost(req, res);
    } catch (err) {
      await abandonSignIn(deps.signIn, admission);
      throw err;
    }
    if (!loaded) return abandonSignIn(deps.signIn, admission);
    const { tenant, email, password } = form;
    const outcome = await authenticateUser(deps.signIn, admission, { tenant, email, password });
    if (outcome.kind === 'throttled') return sendRefusal(res, form, outcome);
    if (outcome.kind === 'wrong-credentials') {
      kit.sendPage(
        res,
        401,
        await formOf(loaded, { email, error: WRONG_CREDENTIALS, invalid: true }),
      );
      return;
    }
    await steps.afterPassword(req, res, loaded, outcome.accountId);
  }

  const formInput = (fields: string[]) => ({ body: { type: 'form' as const, fields } });
  const parse = keepingRequestContext(
    express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 10 }),
  );
  const post = (
    step: string,
    fields: string[],
    handler: (req: Request, res: Response) => Promise<void>,
  ): Route => ({
    method: 'POST',
    path: `${base}/${step}`,
    otherMethods: 'pass',
    errors: ['page'],
    input: formInput(['csrf', ...fields]),
    handlers: [parse, handler],
  });
  const h = steps.handlers;

  return [
    { method: 'GET', path: base, otherMethods: 'pass', errors: ['page'], handlers: [showForm] },
    post('login', ['email', 'password'], signIn),
    post('factor', ['code'], h.postCode),
    post('passkey', ['response'], h.postPasskey),
    post('enrol-totp', ['code'], h.postEnrolTotp),
    post('enrol-passkey', ['response'], h.postEnrolPasskey),
    post('continue', [], h.postContinue),
    ...passkeyScriptRoutes(),
  ];
}
