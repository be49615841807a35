import { keepingRequestContext, type Route } from '@plant/shared/http';
import type { Html } from '@plant/shared/page-look';
import type { Logger } from '@plant/shared/logging';
import express, { type Request, type Response } from 'express';
import type { SignInDeps } from './authenticate-user.js';
import { type PasskeyDeps, type FactorDeps, passkeyScriptRoutes } from '../second-factors/index.js';
import type { RealmProviders } from '../oidc/index.js';
import { interactionKit, type InteractionKit } from './interaction-kit.js';
import { postContinue, postEnrolPasskey, postEnrolTotp } from './enrolment-step.js';
import { postPasskey } from './passkey-step.js';
import { passwordForm, postPassword } from './password-step.js';
import { postCode } from './second-factor-step.js';
import type { SignInEnv } from './sign-in-flow.js';
import { showSignInPage } from './sign-in-page-flow.js';

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
 * The sign-in pages of a realm's interaction, one flow of named steps each: the page the
 * sign-in is at (sign-in-page-flow.ts), the password form (password-step.ts, with "Sign in
 * with a passkey": passkey-step.ts), a second factor by code (second-factor-step.ts), an
 * enrolment and the recovery codes (enrolment-step.ts); what comes next after each is
 * next-step.ts, a step-up from the realm's session step-up-flow.ts. Other methods on their
 * paths go on to the realm's mount, as before they were declared here (oidc-provider answers
 * them).
 */
export function interactionRoutes(deps: InteractionDeps): Route[] {
  const kit: InteractionKit = interactionKit({
    providers: deps.providers,
    csrfKey: deps.csrfKey,
    portalUrl: deps.portalUrl,
    signInForm: (loaded, error: string | Html) =>
      passwordForm(kit, deps.passkeys, loaded, { error }),
  });
  const env: SignInEnv = {
    kit,
    deps: { factors: deps.factors, passkeys: deps.passkeys, logger: deps.logger },
  };

  const base = '/realms/:tenant/interaction/:uid';

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
  const showPage = showSignInPage(env);

  return [
    { method: 'GET', path: base, otherMethods: 'pass', errors: ['page'], handlers: [showPage] },
    post('login', ['email', 'password'], postPassword(env, deps.signIn)),
    post('factor', ['code'], postCode(env)),
    post('passkey', ['response'], postPasskey(env)),
    post('enrol-totp', ['code'], postEnrolTotp(env)),
    post('enrol-passkey', ['response'], postEnrolPasskey(env)),
    post('continue', [], postContinue(env)),
    ...passkeyScriptRoutes(),
  ];
}
