import { createHmac } from 'node:crypto';
import { isDatabaseUnavailable } from '@plant/shared/db';
import type { Route } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import { constantTimeEquals } from '@plant/shared/security';
import express, { type Request, type Response } from 'express';
import {
  authenticateUser,
  refuseWhileBusy,
  type SignInDeps,
  type SignInOutcome,
} from '../../domain/authenticate-user.js';
import { isTenantName } from '../../domain/principal-validators.js';
import {
  messageCard,
  page,
  pageHeaders,
  signInAgainLink,
  unknownRealmPage,
} from '../../provider/provider-pages.js';
import type { RealmProviders } from '../../provider/realm-providers.js';
import {
  BUSY,
  EMAIL_MAX,
  PASSWORD_MAX,
  pausedMessage,
  signInFormPage,
  WRONG_CREDENTIALS,
} from './sign-in-form.js';

export interface InteractionDeps {
  providers: RealmProviders;
  signIn: SignInDeps;
  csrfKey: string;
  portalUrl: string;
  logger: Logger;
}

/**
 * The sign-in form is bound to its interaction: the uid is in the URL and in a signed,
 * SameSite=Lax, path-scoped cookie set by oidc-provider, and the form carries a token
 * derived from the uid with a server key. A cross-site POST lacks the cookie and the token.
 */
function csrfToken(key: string, tenant: string, uid: string): string {
  return createHmac('sha256', key).update(`sign-in:${tenant}:${uid}`).digest('base64url');
}

/**
 * The sign-in pages of a realm's interaction. Other methods on their paths go on to the realm's
 * mount, as before they were declared here (oidc-provider answers them).
 */
export function interactionRoutes(deps: InteractionDeps): Route[] {
  const headers = pageHeaders(new URL(deps.portalUrl).origin);

  function sendPage(res: Response, status: number, body: string): void {
    res.set(headers).status(status).type('html').send(body);
  }

  /** A page that ends this sign-in, with the way to start a new one. */
  function sendEnd(
    res: Response,
    status: number,
    tenant: string,
    heading: string,
    message: string,
  ): void {
    sendPage(
      res,
      status,
      page(heading, messageCard(heading, message, signInAgainLink(deps.portalUrl, tenant)), tenant),
    );
  }

  const base = '/realms/:tenant/interaction/:uid';

  async function loadInteraction(req: Request, res: Response) {
    const tenant = String(req.params.tenant);
    const uid = String(req.params.uid);
    const provider = isTenantName(tenant) ? await deps.providers.providerFor(tenant) : undefined;
    if (!provider) {
      sendPage(res, 404, unknownRealmPage(tenant, deps.portalUrl));
      return undefined;
    }
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.uid !== uid) throw new Error('interaction mismatch');
      return { tenant, uid, provider, details };
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw err;
      sendEnd(
        res,
        400,
        tenant,
        'This sign-in has expired',
        'A sign-in page works for a few minutes, and only in the browser that opened it. Start a new sign-in.',
      );
      return undefined;
    }
  }

  async function showForm(req: Request, res: Response): Promise<void> {
    const loaded = await loadInteraction(req, res);
    if (!loaded) return;
    const { tenant, uid, provider, details } = loaded;
    if (details.prompt.name === 'login') {
      sendPage(res, 200, signInFormPage(tenant, uid, csrfToken(deps.csrfKey, tenant, uid)));
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
    sendPage(res, 429, form);
  }

  /** The form's fields cut to their limits, and whether its CSRF field is the one this service issued. */
  function readSignInForm(req: Request) {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const email = typeof body.email === 'string' ? body.email.trim().slice(0, EMAIL_MAX) : '';
    const password = typeof body.password === 'string' ? body.password.slice(0, PASSWORD_MAX) : '';
    const [tenant, uid] = [String(req.params.tenant), String(req.params.uid)];
    const expected = csrfToken(deps.csrfKey, tenant, uid);
    const csrfValid = typeof body.csrf === 'string' && constantTimeEquals(body.csrf, expected);
    return { tenant, uid, email, password, expected, csrfValid };
  }

  /** A sign-in that did not succeed: the form again, with why (429 to come back later, 401 wrong credentials). */
  function sendFailedSignIn(
    res: Response,
    form: { tenant: string; uid: string; expected: string; email: string },
    outcome: Exclude<SignInOutcome, { kind: 'signed-in' }>,
  ): void {
    const { tenant, uid, expected, email } = form;
    if (outcome.kind === 'wrong-credentials') {
      sendPage(
        res,
        401,
        signInFormPage(tenant, uid, expected, { email, error: WRONG_CREDENTIALS, invalid: true }),
      );
      return;
    }
    const error = outcome.kind === 'busy' ? BUSY : pausedMessage(outcome.retryAfterSeconds);
    sendRefusal(
      res,
      signInFormPage(tenant, uid, expected, { email, error }),
      outcome.retryAfterSeconds,
    );
  }

  async function signIn(req: Request, res: Response): Promise<void> {
    const form = readSignInForm(req);
    const { tenant, uid, email, password, expected, csrfValid } = form;
    // With every password checker busy, a form this service issued (its CSRF field, which
    // the answer only echoes) is refused before its interaction is read: a burst stays cheap.
    const busy = csrfValid ? refuseWhileBusy(deps.signIn) : undefined;
    if (busy) {
      sendRefusal(
        res,
        signInFormPage(tenant, uid, expected, { email, error: BUSY }),
        busy.retryAfterSeconds,
      );
      return;
    }
    const loaded = await loadInteraction(req, res);
    if (!loaded) return;
    if (!csrfValid || loaded.details.prompt.name !== 'login') {
      sendEnd(
        res,
        403,
        tenant,
        'This sign-in form is not valid',
        'It was not sent from the sign-in page this browser opened. Start a new sign-in.',
      );
      return;
    }
    const outcome = await authenticateUser(deps.signIn, {
      tenant,
      email,
      password,
      ip: req.ip ?? '',
    });
    if (outcome.kind !== 'signed-in') {
      sendFailedSignIn(res, form, outcome);
      return;
    }
    await loaded.provider.interactionFinished(
      req,
      res,
      { login: { accountId: outcome.accountId } },
      { mergeWithLastSubmission: false },
    );
  }

  return [
    { method: 'GET', path: base, otherMethods: 'pass', errors: ['page'], handlers: [showForm] },
    {
      method: 'POST',
      path: `${base}/login`,
      otherMethods: 'pass',
      errors: ['page'],
      input: { body: { type: 'form', fields: ['csrf', 'email', 'password'] } },
      handlers: [
        express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 10 }),
        signIn,
      ],
    },
  ];
}
