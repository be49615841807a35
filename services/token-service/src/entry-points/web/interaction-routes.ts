import { createHmac } from 'node:crypto';
import { isDatabaseUnavailable, type Logger, type Route } from '@plant/shared';
import express, { type Request, type Response } from 'express';
import { authenticateUser, refuseWhileBusy, type SignInDeps } from '../../domain/authenticate-user.js';
import { constantTimeEquals } from '@plant/shared';
import { isTenantName } from '../../domain/principal-validators.js';
import { escapeHtml, page, pageSecurityPolicy } from '../../provider/provider-pages.js';
import type { RealmProviders } from '../../provider/realm-providers.js';

export interface InteractionDeps {
  providers: RealmProviders;
  signIn: SignInDeps;
  csrfKey: string;
  portalUrl: string;
  logger: Logger;
}

const FIELD_MAX = 1024;

/** What the form says above the fields when a sign-in is refused with 429. */
const REFUSALS = {
  throttled: 'Too many failed sign-ins. Try again later.',
  busy: 'Too many sign-ins at this moment. Try again in a few seconds.',
};

/**
 * The sign-in form is bound to its interaction: the uid is in the URL and in a signed,
 * SameSite=Lax, path-scoped cookie set by oidc-provider, and the form carries a token
 * derived from the uid with a server key. A cross-site POST lacks the cookie and the token.
 */
function csrfToken(key: string, tenant: string, uid: string): string {
  return createHmac('sha256', key).update(`sign-in:${tenant}:${uid}`).digest('base64url');
}

function loginForm(tenant: string, uid: string, csrf: string, { email = '', error = '' } = {}): string {
  const action = `/realms/${escapeHtml(tenant)}/interaction/${escapeHtml(uid)}/login`;
  return `<h1>Sign in</h1>
<p>Plant Store account <strong>${escapeHtml(tenant)}</strong></p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${action}" autocomplete="on">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${escapeHtml(email)}" autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${FIELD_MAX}">
<button type="submit">Sign in</button>
</form>`;
}

/**
 * The sign-in pages of a realm's interaction. Other methods on their paths go on to the realm's
 * mount, as before they were declared here (oidc-provider answers them).
 */
export function interactionRoutes(deps: InteractionDeps): Route[] {
  const policy = pageSecurityPolicy(new URL(deps.portalUrl).origin);

  function sendPage(res: Response, status: number, title: string, body: string): void {
    res.setHeader('cache-control', 'no-store');
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('content-security-policy', policy);
    res.setHeader('referrer-policy', 'no-referrer');
    res.status(status).type('html').send(page(title, body));
  }

  const base = '/realms/:tenant/interaction/:uid';

  async function loadInteraction(req: Request, res: Response) {
    const tenant = String(req.params.tenant);
    const uid = String(req.params.uid);
    const provider = isTenantName(tenant) ? await deps.providers.providerFor(tenant) : undefined;
    if (!provider) {
      sendPage(res, 404, 'Not found', '<h1>Unknown account</h1>');
      return undefined;
    }
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.uid !== uid) throw new Error('interaction mismatch');
      return { tenant, uid, provider, details };
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw err;
      sendPage(res, 400, 'Sign-in expired', '<h1>This sign-in has expired</h1><p>Go back to the portal and start again.</p>');
      return undefined;
    }
  }

  async function showForm(req: Request, res: Response): Promise<void> {
    const loaded = await loadInteraction(req, res);
    if (!loaded) return;
    const { tenant, uid, provider, details } = loaded;
    if (details.prompt.name === 'login') {
      sendPage(res, 200, 'Sign in', loginForm(tenant, uid, csrfToken(deps.csrfKey, tenant, uid)));
      return;
    }
    // Sign-in grants what the user's role allows (loadExistingGrant); asking for more is refused, never prompted.
    await provider.interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: 'the requested scope exceeds what this account may be granted' },
      { mergeWithLastSubmission: false },
    );
  }

  /** 429: the form again, with why and when to come back. */
  function sendRefusal(res: Response, form: string, retryAfterSeconds: number): void {
    res.setHeader('retry-after', String(retryAfterSeconds));
    sendPage(res, 429, 'Sign in', form);
  }

  async function signIn(req: Request, res: Response): Promise<void> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const email = typeof body.email === 'string' ? body.email.trim().slice(0, 254) : '';
    const password = typeof body.password === 'string' ? body.password.slice(0, FIELD_MAX) : '';
    const [tenant, uid] = [String(req.params.tenant), String(req.params.uid)];
    const expected = csrfToken(deps.csrfKey, tenant, uid);
    const csrfValid = typeof body.csrf === 'string' && constantTimeEquals(body.csrf, expected);
    // With every password checker busy, a form this service issued (its CSRF field, which
    // the answer only echoes) is refused before its interaction is read: a burst stays cheap.
    const busy = csrfValid ? refuseWhileBusy(deps.signIn) : undefined;
    if (busy) {
      sendRefusal(res, loginForm(tenant, uid, expected, { email, error: REFUSALS.busy }), busy.retryAfterSeconds);
      return;
    }
    const loaded = await loadInteraction(req, res);
    if (!loaded) return;
    if (!csrfValid || loaded.details.prompt.name !== 'login') {
      sendPage(res, 403, 'Sign-in refused', '<h1>This sign-in form is not valid</h1><p>Go back to the portal and start again.</p>');
      return;
    }
    const outcome = await authenticateUser(deps.signIn, { tenant, email, password, ip: req.ip ?? '' });
    if (outcome.kind === 'throttled' || outcome.kind === 'busy') {
      sendRefusal(res, loginForm(tenant, uid, expected, { email, error: REFUSALS[outcome.kind] }), outcome.retryAfterSeconds);
      return;
    }
    if (outcome.kind === 'wrong-credentials') {
      sendPage(res, 401, 'Sign in', loginForm(tenant, uid, expected, { email, error: 'Email or password is incorrect.' }));
      return;
    }
    await loaded.provider.interactionFinished(req, res, { login: { accountId: outcome.accountId } }, { mergeWithLastSubmission: false });
  }

  return [
    { method: 'GET', path: base, otherMethods: 'pass', errors: ['page'], handlers: [showForm] },
    {
      method: 'POST',
      path: `${base}/login`,
      otherMethods: 'pass',
      errors: ['page'],
      input: { body: { type: 'form', fields: ['csrf', 'email', 'password'] } },
      handlers: [express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 10 }), signIn],
    },
  ];
}
