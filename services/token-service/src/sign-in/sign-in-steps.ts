/**
 * The steps of a realm sign-in after the person is known, and the step-up and enrolment the
 * portal asks for. A sign-in's progress is kept server-side in its interaction (oidc-provider's
 * `result`, under `plant`, never `login`): oidc-provider completes a sign-in only from a
 * `login` result, which is written once every step is done, so resuming the authorization
 * early only starts a new sign-in.
 *
 *   password ─┐                     ┌─ factor (passkey / code / recovery code) ─┐
 *   passkey ──┼─ person known ──────┼─ enrol (policy or plant_action) ──────────┼─ finish
 *   realm session (step-up) ────────┘                                           │
 *                                    recovery codes shown once ─ continue ─────┘
 */
import type { Logger } from '@plant/shared/logging';
import type { Request, Response } from 'express';
import {
  StaleFactorGeneration,
  type SignInPerson,
  finishAuthentication,
  finishRegistration,
  authenticationOptions,
  registrationOptions,
  type PasskeyAuthentication,
  type PasskeyDeps,
  AMR,
  confirmTotpEnrolment,
  FACTOR_ACR,
  hasSecondFactor,
  isPlantAction,
  mustEnrol,
  nextStep,
  PASSWORD_ACR,
  pendingTotp,
  replaceRecoveryCodes,
  startTotpEnrolment,
  verifyCode,
  type FactorDeps,
  type PlantAction,
  CODE_MAX,
  continuePage,
  enrolPage,
  factorPage,
  PASSKEY_REFUSED,
  PASSKEY_RESPONSE_MAX,
  recoveryCodesPage,
  WRONG_CODE,
  type FormTarget,
} from '../second-factors/index.js';
import type { InteractionKit, LoadedInteraction } from './interaction-kit.js';
import { pausedMessage } from './sign-in-form.js';

/** A sign-in's progress, in its interaction. */
export interface SignInState {
  sub: string;
  /** The methods verified so far (RFC 8176). */
  amr: string[];
  /** A second factor (or a passkey) was verified in this sign-in. */
  factorVerified: boolean;
  step: 'factor' | 'enrol' | 'codes-shown';
  /** What the portal asked for besides signing in, until done. */
  action?: PlantAction | undefined;
  /** A pending authenticator-app secret, sealed to this interaction. */
  totpSealed?: string | undefined;
  /**
   * The person's factor generation when this sign-in first knew them: once a factor is taken
   * away (reset, removal) the sign-in is void, so a factor verified before a reset never
   * carries an enrolment after it.
   */
  factorGeneration?: number | undefined;
}

export interface SignInStepDeps {
  factors: FactorDeps;
  passkeys: PasskeyDeps;
  logger: Logger;
}

const union = (a: readonly string[], b: readonly string[]) => [...new Set([...a, ...b])];

export function stateOf(loaded: LoadedInteraction): SignInState | undefined {
  const state = (loaded.details.result as { plant?: SignInState } | undefined)?.plant;
  return state && typeof state.sub === 'string' ? state : undefined;
}

export function actionOf(loaded: LoadedInteraction): PlantAction | undefined {
  const action = loaded.details.params.plant_action;
  return isPlantAction(action) ? action : undefined;
}

const ttlOf = (loaded: LoadedInteraction) =>
  Math.max(1, loaded.details.exp - Math.floor(Date.now() / 1000));

export function signInSteps(kit: InteractionKit, deps: SignInStepDeps) {
  const { userFactors } = deps.factors.identity;
  const target = (loaded: LoadedInteraction): FormTarget => ({
    tenant: loaded.tenant,
    uid: loaded.uid,
    csrf: kit.csrfFor(loaded.tenant, loaded.uid),
  });
  const pagePath = (loaded: LoadedInteraction) =>
    `/realms/${loaded.tenant}/interaction/${loaded.uid}`;

  async function save(
    req: Request,
    res: Response,
    loaded: LoadedInteraction,
    state: SignInState,
  ): Promise<void> {
    await loaded.provider.interactionResult(
      req,
      res,
      { plant: state },
      {
        mergeWithLastSubmission: false,
      },
    );
  }

  /** Saves the state and shows its page (a GET, so a reload asks nothing twice). */
  async function goTo(
    req: Request,
    res: Response,
    loaded: LoadedInteraction,
    state: SignInState,
  ): Promise<void> {
    await save(req, res, loaded, state);
    res.redirect(303, pagePath(loaded));
  }

  function refuseDisabled(res: Response, loaded: LoadedInteraction): void {
    kit.sendEnd(
      res,
      403,
      loaded.tenant,
      'This account cannot sign in',
      'Your access to this Plant Store account is disabled or was removed. Ask an Account Admin of the account.',
    );
  }

  function refuseStale(res: Response, loaded: LoadedInteraction): void {
    kit.sendEnd(
      res,
      409,
      loaded.tenant,
      'Start signing in again',
      'The second factors of this account changed while you were signing in. Start again from the Plant Store portal.',
    );
  }

  /** The live person of a sign-in in progress, at the factor generation it began with; otherwise answered. */
  async function livePerson(
    res: Response,
    loaded: LoadedInteraction,
    state: SignInState,
  ): Promise<SignInPerson | undefined> {
    const person = await userFactors.person(loaded.tenant, state.sub);
    if (!person || person.disabled) {
      refuseDisabled(res, loaded);
      return undefined;
    }
    if (
      state.factorGeneration !== undefined &&
      state.factorGeneration !== person.factorGeneration
    ) {
      refuseStale(res, loaded);
      return undefined;
    }
    return person;
  }

  async function finish(
    req: Request,
    res: Response,
    loaded: LoadedInteraction,
    state: SignInState,
  ): Promise<void> {
    await userFactors.recordSignIn(loaded.tenant, state.sub);
    await loaded.provider.interactionFinished(
      req,
      res,
      {
        login: {
          accountId: state.sub,
          acr: state.factorVerified ? FACTOR_ACR : PASSWORD_ACR,
          amr: state.amr,
        },
      },
      { mergeWithLastSubmission: false },
    );
  }

  /** Shows new recovery codes (once) and waits for the person to continue. */
  async function showNewCodes(
    req: Request,
    res: Response,
    loaded: LoadedInteraction,
    state: SignInState,
    codes: string[],
  ): Promise<void> {
    await save(req, res, loaded, { ...state, step: 'codes-shown', action: undefined });
    kit.sendPage(res, 200, recoveryCodesPage(target(loaded), codes));
  }

  /** The next step for a person known to this sign-in, from what they hold and what was asked. */
  async function advance(
    req: Request,
    res: Response,
    loaded: LoadedInteraction,
    known: SignInState,
  ): Promise<void> {
    const person = await livePerson(res, loaded, known);
    if (!person) return;
    const state = { ...known, factorGeneration: known.factorGeneration ?? person.factorGeneration };
    if (!state.factorVerified && hasSecondFactor(person))
      return goTo(req, res, loaded, { ...state, step: 'factor' });
    const wantsEnrolment =
      state.action === 'enrol-passkey' ||
      (state.action === 'enrol-totp' && !person.totp) ||
      (!hasSecondFactor(person) && (mustEnrol(person) || state.action === 'recovery-codes'));
    if (wantsEnrolment) return goTo(req, res, loaded, { ...state, step: 'enrol' });
    if (state.action === 'enrol-totp') {
      await save(req, res, loaded, { ...state, step: 'codes-shown', action: undefined });
      kit.sendPage(
        res,
        200,
        continuePage(
          target(loaded),
          'You already have an authenticator app. Remove it on the Security page of the portal to set up another.',
        ),
      );
      return;
    }
    if (state.action === 'recovery-codes') {
      const codes = await replaceRecoveryCodes(deps.factors, {
        tenant: loaded.tenant,
        sub: person.sub,
        email: person.email,
        ip: req.ip ?? null,
      });
      return showNewCodes(req, res, loaded, state, codes);
    }
    return finish(req, res, loaded, state);
  }

  /** After a right password. */
  function afterPassword(req: Request, res: Response, loaded: LoadedInteraction, sub: string) {
    return advance(req, res, loaded, {
      sub,
      amr: [...AMR.password],
      factorVerified: false,
      step: 'factor',
      action: actionOf(loaded),
    });
  }

  /**
   * A sign-in started while the realm's session names a person (the portal's step-up or
   * enrolment: `max_age=0`, `acr_values`, `plant_action`): only what that person still needs
   * is asked, starting with a factor they hold. False when a full sign-in is due instead:
   * nothing but the password to ask for, or a person without a factor, whose enrolment (asked
   * for, or required by the policy) needs the password again: a session alone, perhaps
   * someone else's browser, never chooses the account's second factor.
   */
  async function startFromSession(
    req: Request,
    res: Response,
    loaded: LoadedInteraction,
  ): Promise<boolean> {
    const session = loaded.details.session;
    if (session?.accountId === undefined) return false;
    const person = await userFactors.person(loaded.tenant, session.accountId);
    if (!person || person.disabled || !hasSecondFactor(person)) return false;
    if (nextStep(person, actionOf(loaded)) === 'finish') return false;
    await advance(req, res, loaded, {
      sub: person.sub,
      amr: session.amr ?? [...AMR.password],
      factorVerified: false,
      step: 'factor',
      action: actionOf(loaded),
    });
    return true;
  }

  async function factorPageFor(
    loaded: LoadedInteraction,
    person: SignInPerson,
    error?: string,
  ): Promise<string> {
    const passkeyOptions =
      person.passkeys > 0
        ? await authenticationOptions(deps.passkeys, {
            tenant: loaded.tenant,
            interaction: loaded.uid,
            ttlSeconds: ttlOf(loaded),
            sub: person.sub,
          })
        : undefined;
    return factorPage(target(loaded), {
      ...(passkeyOptions && { passkeyOptions }),
      codes: person.totp || person.recoveryCodesLeft > 0,
      ...(error !== undefined && { error }),
    });
  }

  async function enrolPageFor(
    req: Request,
    res: Response,
    loaded: LoadedInteraction,
    person: SignInPerson,
    state: SignInState,
    error?: string,
  ): Promise<string> {
    const passkeyOptions =
      state.action === 'enrol-totp'
        ? undefined
        : await registrationOptions(deps.passkeys, {
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
          ? pendingTotp(deps.factors, { ...base, sealed: state.totpSealed })
          : startTotpEnrolment(deps.factors, base);
      await save(req, res, loaded, { ...state, totpSealed: pending.sealed });
      totp = { secret: pending.secret, uri: pending.uri };
    }
    return enrolPage(target(loaded), {
      required: mustEnrol(person),
      ...(passkeyOptions && { passkeyOptions }),
      ...(totp && { totp }),
      ...(error !== undefined && { error }),
    });
  }

  /** The page of a sign-in in progress (GET). */
  async function showStep(
    req: Request,
    res: Response,
    loaded: LoadedInteraction,
    state: SignInState,
  ): Promise<void> {
    const person = await livePerson(res, loaded, state);
    if (!person) return;
    if (state.step === 'factor') {
      kit.sendPage(res, 200, await factorPageFor(loaded, person));
      return;
    }
    if (state.step === 'enrol') {
      kit.sendPage(res, 200, await enrolPageFor(req, res, loaded, person, state));
      return;
    }
    kit.sendPage(res, 200, continuePage(target(loaded), 'Your second factor is set up.'));
  }

  /** The interaction of a POST whose CSRF field is valid and whose state is at `step`; otherwise answered. */
  async function loadStep(
    req: Request,
    res: Response,
    step: SignInState['step'],
  ): Promise<{ loaded: LoadedInteraction; state: SignInState } | undefined> {
    const loaded = await kit.loadPost(req, res);
    if (!loaded) return undefined;
    const state = stateOf(loaded);
    if (state?.step !== step) {
      kit.sendInvalidForm(res, loaded.tenant);
      return undefined;
    }
    return { loaded, state };
  }

  /** `loadStep`, then the live person of the step (a disabled or removed one is refused here). */
  async function loadStepPerson(req: Request, res: Response, step: SignInState['step']) {
    const at = await loadStep(req, res, step);
    if (!at) return undefined;
    const person = await livePerson(res, at.loaded, at.state);
    return person && { ...at, person };
  }

  const field = (req: Request, name: string, max: number) => {
    const value = (req.body as Record<string, unknown> | undefined)?.[name];
    return typeof value === 'string' ? value.slice(0, max) : '';
  };

  function sendThrottled(res: Response, page: string, retryAfterSeconds: number): void {
    res.setHeader('retry-after', String(retryAfterSeconds));
    kit.sendPage(res, 429, page);
  }

  async function postCode(req: Request, res: Response): Promise<void> {
    const at = await loadStepPerson(req, res, 'factor');
    if (!at) return;
    const { loaded, state, person } = at;
    const outcome = await verifyCode(deps.factors, {
      tenant: loaded.tenant,
      sub: person.sub,
      email: person.email,
      ip: req.ip ?? '',
      code: field(req, 'code', CODE_MAX),
    });
    if (outcome.kind === 'throttled') {
      const page = await factorPageFor(
        loaded,
        person,
        pausedMessage(outcome.retryAfterSeconds).toString(),
      );
      return sendThrottled(res, page, outcome.retryAfterSeconds);
    }
    if (outcome.kind === 'wrong') {
      kit.sendPage(res, 401, await factorPageFor(loaded, person, WRONG_CODE));
      return;
    }
    await advance(req, res, loaded, {
      ...state,
      // The code's own methods: `pwd` is in the state only when a password was checked.
      amr: union(state.amr, ['otp', 'mfa']),
      factorVerified: true,
    });
  }

  /** A passkey: the second step for a known person, or a whole sign-in from the password form. */
  async function postPasskey(req: Request, res: Response): Promise<void> {
    const loaded = await kit.loadPost(req, res);
    if (!loaded) return;
    const state = stateOf(loaded);
    if (state !== undefined && state.step !== 'factor')
      return kit.sendInvalidForm(res, loaded.tenant);
    const outcome = await finishAuthentication(deps.passkeys, {
      tenant: loaded.tenant,
      interaction: loaded.uid,
      response: field(req, 'response', PASSKEY_RESPONSE_MAX),
      ip: req.ip ?? '',
      ...(state && { expectedSub: state.sub }),
    });
    if (outcome.kind === 'verified') {
      return advance(req, res, loaded, {
        sub: outcome.sub,
        // A passkey after a password adds to it; alone it is the whole sign-in.
        amr: state ? union(state.amr, outcome.amr) : [...outcome.amr],
        factorVerified: true,
        step: 'factor',
        action: state?.action ?? actionOf(loaded),
      });
    }
    await sendPasskeyRefusal(res, loaded, state, outcome);
  }

  /** A passkey that did not sign in: the page it came from again, with why. */
  async function sendPasskeyRefusal(
    res: Response,
    loaded: LoadedInteraction,
    state: SignInState | undefined,
    outcome: Exclude<PasskeyAuthentication, { kind: 'verified' }>,
  ): Promise<void> {
    const throttled = outcome.kind === 'throttled';
    const message = throttled ? pausedMessage(outcome.retryAfterSeconds) : PASSKEY_REFUSED;
    if (throttled) res.setHeader('retry-after', String(outcome.retryAfterSeconds));
    const status = throttled ? 429 : 401;
    if (!state) return kit.sendSignInForm(res, loaded, status, message);
    const person = await livePerson(res, loaded, state);
    if (!person) return;
    kit.sendPage(res, status, await factorPageFor(loaded, person, message.toString()));
  }

  /** An enrolment, refused (and answered) when a factor was taken away since the sign-in began. */
  async function enrolling<T>(
    res: Response,
    loaded: LoadedInteraction,
    enrol: () => Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await enrol();
    } catch (err) {
      if (!(err instanceof StaleFactorGeneration)) throw err;
      refuseStale(res, loaded);
      return undefined;
    }
  }

  async function postEnrolTotp(req: Request, res: Response): Promise<void> {
    const at = await loadStepPerson(req, res, 'enrol');
    if (!at) return;
    const { loaded, state, person } = at;
    if (state.totpSealed === undefined) return kit.sendInvalidForm(res, loaded.tenant);
    const outcome = await enrolling(res, loaded, () =>
      confirmTotpEnrolment(deps.factors, {
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
    if (!outcome) return;
    if (outcome.kind === 'wrong') {
      kit.sendPage(
        res,
        400,
        await enrolPageFor(
          req,
          res,
          loaded,
          person,
          state,
          'That code does not match the key. Check the app shows this account, and try the next code.',
        ),
      );
      return;
    }
    const done: SignInState = {
      ...state,
      totpSealed: undefined,
      factorVerified: true,
      amr: union(state.amr, ['otp', 'mfa']),
    };
    if (outcome.kind === 'exists') return advance(req, res, loaded, { ...done, action: undefined });
    return showNewCodes(req, res, loaded, done, outcome.recoveryCodes);
  }

  async function postEnrolPasskey(req: Request, res: Response): Promise<void> {
    const at = await loadStepPerson(req, res, 'enrol');
    if (!at) return;
    const { loaded, state, person } = at;
    const outcome = await enrolling(res, loaded, () =>
      finishRegistration(deps.passkeys, {
        tenant: loaded.tenant,
        interaction: loaded.uid,
        sub: person.sub,
        email: person.email,
        ip: req.ip ?? '',
        response: field(req, 'response', PASSKEY_RESPONSE_MAX),
        generation: state.factorGeneration ?? person.factorGeneration,
      }),
    );
    if (!outcome) return;
    if (outcome.kind === 'refused') {
      kit.sendPage(
        res,
        400,
        await enrolPageFor(
          req,
          res,
          loaded,
          person,
          state,
          'The passkey could not be added. Try again.',
        ),
      );
      return;
    }
    await advance(req, res, loaded, {
      ...state,
      totpSealed: undefined,
      factorVerified: true,
      amr: union(state.amr, AMR.passkey),
      action: state.action === 'enrol-passkey' ? undefined : state.action,
    });
  }

  async function postContinue(req: Request, res: Response): Promise<void> {
    const at = await loadStep(req, res, 'codes-shown');
    if (!at) return;
    await advance(req, res, at.loaded, { ...at.state, action: undefined });
  }

  return {
    afterPassword,
    startFromSession,
    showStep,
    handlers: { postCode, postPasskey, postEnrolTotp, postEnrolPasskey, postContinue },
  };
}
