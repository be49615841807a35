import { keepingRequestContext, type Route } from '@plant/shared/http';
import type { Html } from '@plant/shared/page-look';
import type { Logger } from '@plant/shared/logging';
import express, { type Request, type Response } from 'express';
import {
  authenticateUser,
  refuseWhileBusy,
  type SignInDeps,
  type SignInOutcome,
} from '../../domain/authenticate-user.js';
import { authenticationOptions, type PasskeyDeps } from '../../domain/passkeys.js';
import type { FactorDeps } from '../../domain/second-factors.js';
import type { RealmProviders } from '../../provider/realm-providers.js';
import { passkeyForm } from './factor-pages.js';
import { interactionKit, type LoadedInteraction } from './interaction-kit.js';
import { passkeyScriptRoutes } from './passkey-script.js';
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

  /** 429: the form again, with why and when to come back. */
  function sendRefusal(res: Response, form: string, retryAfterSeconds: number): void {
    res.setHeader('retry-after', String(retryAfterSeconds));
    kit.sendPage(res, 429, form);
  }

  /** The form's fields cut to their limits, and whether its CSRF field is the one this service issued. */
  function readSignInForm(req: Request) {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const email = typeof body.email === 'string' ? body.email.trim().slice(0, EMAIL_MAX) : '';
    const password = typeof body.password === 'string' ? body.password.slice(0, PASSWORD_MAX) : '';
    const [tenant, uid] = [String(req.params.tenant), String(req.params.uid)];
    return { tenant, uid, email, password, csrfValid: kit.csrfValid(req) };
  }

  /** A sign-in that did not succeed: the form again, with why (429 to come back later, 401 wrong credentials). */
  async function sendFailedSignIn(
    res: Response,
    loaded: LoadedInteraction,
    email: string,
    outcome: Exclude<SignInOutcome, { kind: 'signed-in' }>,
  ): Promise<void> {
    if (outcome.kind === 'wrong-credentials') {
      kit.sendPage(
        res,
        401,
        await formOf(loaded, { email, error: WRONG_CREDENTIALS, invalid: true }),
      );
      return;
    }
    const error = outcome.kind === 'busy' ? BUSY : pausedMessage(outcome.retryAfterSeconds);
    sendRefusal(res, await formOf(loaded, { email, error }), outcome.retryAfterSeconds);
  }

  async function signIn(req: Request, res: Response): Promise<void> {
    const { tenant, uid, email, password, csrfValid } = readSignInForm(req);
    // With every password checker busy, a form this service issued (its CSRF field, which
    // the answer only echoes) is refused before its interaction is read: a burst stays cheap.
    const busy = csrfValid ? refuseWhileBusy(deps.signIn) : undefined;
    if (busy) {
      sendRefusal(
        res,
        signInFormPage(tenant, uid, kit.csrfFor(tenant, uid), { email, error: BUSY }),
        busy.retryAfterSeconds,
      );
      return;
    }
    const loaded = await kit.loadPost(req, res);
    if (!loaded) return;
    const outcome = await authenticateUser(deps.signIn, {
      tenant,
      email,
      password,
      ip: req.ip ?? '',
    });
    if (outcome.kind !== 'signed-in') return sendFailedSignIn(res, loaded, email, outcome);
    await steps.afterPassword(req, res, loaded, outcome.accountId);
  }

  const form = (fields: string[]) => ({ body: { type: 'form' as const, fields } });
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
    input: form(['csrf', ...fields]),
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
