/**
 * GET /login?tenant=<t>[&return_to=/path] starts authorization code + PKCE against the
 * tenant's realm; GET /step-up?return_to=/path[&action=…] starts the same against the session's
 * realm asking for a second factor again (RFC 9470 `acr_values`, `max_age=0`); GET /auth/callback
 * finishes either: a sign-in opens a server-side session, a step-up refreshes the factor time
 * of the session that asked (same person, same session, same browser);
 * POST /logout (CSRF-checked) ends it and returns where to end the realm session: the realm's
 * end_session_endpoint with the sign-in's ID token as `id_token_hint`, so the realm's own
 * sign-in session in that browser ends too (a portal sign-out that left it alive would let the
 * next /login in that browser straight back in, no password asked).
 */
import { isTenantName, PORTAL_CLIENT_ID } from '@plant/shared/api';
import type { Route } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import { constantTimeEquals, refusalDelay, type SourceBudget } from '@plant/shared/security';
import type { TokenServiceClient, User } from '@plant/shared/token-service-client';
import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import {
  type Role,
  FACTOR_ACR,
  TokenServiceUnavailable,
  hasSecondFactor,
} from '../platform/index.js';
import {
  factorStateOf,
  type PendingSignIn,
  recordStepUp,
  savePendingSignIn,
  SIGN_IN_TTL_SECONDS,
  sessionVoidedByFactors,
  type SessionStore,
  takePendingSignIn,
  bindingHash,
  randomBinding,
  readCookies,
  SIGNIN_COOKIE,
  type PortalSessions,
} from '../sessions/index.js';
import type { OidcClients } from './oidc-clients.js';
import { pageRoutes, messagePage, sendPage } from '../portal/index.js';
import { signOutPage, tenantPickerPage } from './sign-in-pages.js';
import { safeReturnTo } from './return-to.js';

export interface SignInDeps {
  oidc: OidcClients;
  store: SessionStore;
  sessions: PortalSessions;
  /**
   * Each start stores a pending sign-in for SIGN_IN_TTL_SECONDS before anyone has signed in:
   * a start takes a point of its source's budget and everyone's first (or 429).
   */
  starts: SourceBudget;
  tokenService: TokenServiceClient;
  secret: string;
  portalUrl: string;
  logger: Logger;
}

const ROLES: readonly Role[] = ['View', 'Edit', 'Account Admin'];

/** What a step-up may ask the realm to run before the factor check finishes (its `plant_action`). */
const STEP_UP_ACTIONS = new Set(['enrol-passkey', 'enrol-totp', 'recovery-codes']);

const unavailablePage = () =>
  messagePage(
    'Sign-in is unavailable',
    'Sign-in is temporarily unavailable. Try again in a moment.',
  );

/** "a minute", "7 minutes", "30 seconds". */
function waitText(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? 'a second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? 'a minute' : `${minutes} minutes`;
}

export function signInRoutes(deps: SignInDeps): Route[] {
  const portalBase = deps.portalUrl.replace(/\/+$/, '');
  // A second a refusal: a flood that ignores Retry-After gets one answer per connection a second.
  const delayed = refusalDelay({ delayMs: 1000, maxHeld: 1000 });

  async function startSignIn(req: Request, res: Response): Promise<void> {
    const tenantParam = req.query.tenant;
    const returnTo = safeReturnTo(req.query.return_to);
    if (tenantParam === undefined || tenantParam === '') {
      sendPage(res, 200, tenantPickerPage({ returnTo }));
      return;
    }
    const tenant = typeof tenantParam === 'string' ? tenantParam.trim().toLowerCase() : '';
    if (!isTenantName(tenant)) {
      sendPage(
        res,
        400,
        tenantPickerPage({
          error: 'Account names are 1 to 63 lower-case letters, digits and inner hyphens.',
          tenant: typeof tenantParam === 'string' ? tenantParam.slice(0, 63) : '',
          returnTo,
        }),
      );
      return;
    }
    if (!(await takeStartBudget(req, res))) return;
    try {
      await deps.tokenService.getTenant(tenant);
    } catch (err) {
      if (err instanceof TokenServiceUnavailable) {
        sendPage(res, 503, unavailablePage());
        return;
      }
      sendPage(
        res,
        404,
        tenantPickerPage({
          error: `There is no Plant Store account named “${tenant}”. Check the name and try again.`,
          tenant,
          returnTo,
        }),
      );
      return;
    }
    await redirectToRealm(res, { tenant, returnTo, purpose: 'sign-in' }, {});
  }

  /**
   * Takes a point of the source's start budget (and everyone's), before any realm lookup: a
   * flood of made-up names costs the token service nothing either. False: answered 429.
   */
  async function takeStartBudget(req: Request, res: Response): Promise<boolean> {
    const over = await deps.starts.take(req.ip ?? '');
    if (over === undefined) return true;
    delayed(res, () => {
      res.setHeader('retry-after', String(over.retryAfterSeconds));
      sendPage(
        res,
        429,
        messagePage(
          'Too many sign-ins',
          `Too many sign-ins were started from this network. Try again in ${waitText(over.retryAfterSeconds)}.`,
        ),
      );
    });
    return false;
  }

  /**
   * Saves the pending sign-in (PKCE verifier, state, nonce, browser binding) and sends the
   * browser to the realm's authorization endpoint with `extra` parameters (step-up's acr_values…).
   */
  async function redirectToRealm(
    res: Response,
    start: Pick<PendingSignIn, 'tenant' | 'returnTo' | 'purpose' | 'stepUpSession'>,
    extra: Record<string, string>,
  ): Promise<void> {
    let config: oidc.Configuration;
    try {
      config = await deps.oidc.configFor(start.tenant);
    } catch (err) {
      deps.logger.warn(
        { err: { message: (err as Error).message }, tenant: start.tenant },
        'realm discovery failed',
      );
      sendPage(res, 503, unavailablePage());
      return;
    }
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const binding = randomBinding();
    await savePendingSignIn(deps.store, state, {
      ...start,
      codeVerifier,
      nonce,
      binding: bindingHash(deps.secret, binding),
    });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: deps.oidc.redirectUri,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    });
    res.cookie(SIGNIN_COOKIE, binding, deps.sessions.cookieOptions(SIGN_IN_TTL_SECONDS * 1000));
    res.setHeader('cache-control', 'no-store');
    res.redirect(303, deps.oidc.toPublic(url).href);
  }

  /**
   * GET /step-up?return_to=…[&action=…]: the realm verifies a second factor of the signed-in
   * person again (`acr_values` factor, `max_age=0`), or runs an enrolment first (`plant_action`);
   * the callback refreshes this session's factor time and returns to `return_to`.
   */
  async function startStepUp(req: Request, res: Response): Promise<void> {
    const returnTo = safeReturnTo(req.query.return_to);
    const action = req.query.action;
    if (action !== undefined && !(typeof action === 'string' && STEP_UP_ACTIONS.has(action))) {
      sendPage(
        res,
        400,
        messagePage('Unknown action', 'That security action does not exist. Go back and retry.'),
      );
      return;
    }
    const loaded = await deps.sessions.load(req);
    if (!loaded || loaded.session.handle === undefined) {
      res.redirect(303, `/?return_to=${encodeURIComponent(returnTo)}`);
      return;
    }
    if (!(await takeStartBudget(req, res))) return;
    const { session } = loaded;
    await redirectToRealm(
      res,
      { tenant: session.tenant, returnTo, purpose: 'step-up', stepUpSession: session.handle },
      {
        acr_values: FACTOR_ACR,
        max_age: '0',
        ...(session.email === null ? {} : { login_hint: session.email }),
        ...(typeof action === 'string' ? { plant_action: action } : {}),
      },
    );
  }

  async function finishSignIn(req: Request, res: Response): Promise<void> {
    const expired = () =>
      sendPage(
        res,
        400,
        messagePage(
          'Sign-in expired',
          'This sign-in has expired or was started in another browser. Start again.',
        ),
      );
    const state = req.query.state;
    if (typeof state !== 'string' || state.length === 0 || state.length > 256) return expired();
    const pending = await takePendingSignIn(deps.store, state);
    const binding = readCookies(req)[SIGNIN_COOKIE];
    res.clearCookie(SIGNIN_COOKIE, deps.sessions.cookieOptions());
    if (
      !pending ||
      binding === undefined ||
      !constantTimeEquals(bindingHash(deps.secret, binding), pending.binding)
    )
      return expired();
    if (typeof req.query.error === 'string' && pending.purpose === 'step-up') {
      sendPage(
        res,
        400,
        messagePage(
          'Check not completed',
          'Your second factor was not checked, so the action was not done. Go back and try again.',
          { link: { href: safeReturnTo(pending.returnTo), text: 'Go back' } },
        ),
      );
      return;
    }
    if (typeof req.query.error === 'string') {
      sendPage(
        res,
        400,
        messagePage(
          'Sign-in was not completed',
          'The sign-in was cancelled or refused. Start again.',
          {
            link: {
              href: `/login?tenant=${encodeURIComponent(pending.tenant)}`,
              text: 'Sign in again',
            },
          },
        ),
      );
      return;
    }
    let claims: oidc.IDToken | undefined;
    let idToken: string | undefined;
    try {
      const config = await deps.oidc.configFor(pending.tenant);
      const tokens = await oidc.authorizationCodeGrant(
        config,
        new URL(req.originalUrl, portalBase),
        {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        },
      );
      claims = tokens.claims();
      idToken = tokens.id_token;
    } catch (err) {
      deps.logger.warn(
        {
          err: { message: (err as Error).message, code: (err as { code?: unknown }).code },
          tenant: pending.tenant,
        },
        'sign-in code exchange failed',
      );
      sendPage(
        res,
        400,
        messagePage('Sign-in failed', 'The sign-in could not be completed. Start again.', {
          link: {
            href: `/login?tenant=${encodeURIComponent(pending.tenant)}`,
            text: 'Sign in again',
          },
        }),
      );
      return;
    }
    const role = claims?.role;
    if (
      !claims ||
      claims.tenant !== pending.tenant ||
      typeof claims.sub !== 'string' ||
      typeof role !== 'string' ||
      !ROLES.includes(role as Role)
    ) {
      sendPage(
        res,
        403,
        messagePage('Sign-in refused', 'This sign-in cannot open an admin session.'),
      );
      return;
    }
    if (pending.purpose === 'step-up') {
      await finishStepUp(req, res, pending, claims);
      return;
    }
    await openSignedInSession(req, res, pending, claims, idToken);
  }

  /** A sign-in's callback: the person's current role and token version, then a fresh session. */
  async function openSignedInSession(
    req: Request,
    res: Response,
    pending: PendingSignIn,
    claims: oidc.IDToken,
    idToken: string | undefined,
  ): Promise<void> {
    let person: User;
    try {
      // The token version every later request is checked against (and the role as of now).
      person = await deps.tokenService.getUser(pending.tenant, claims.sub);
    } catch (err) {
      if (err instanceof TokenServiceUnavailable) sendPage(res, 503, unavailablePage());
      else
        sendPage(
          res,
          403,
          messagePage('Sign-in refused', 'This sign-in cannot open an admin session.'),
        );
      return;
    }
    // The realm enrols such a person before it finishes; a factor taken away meanwhile does not open a session either.
    if (sessionVoidedByFactors(person, person.factor_generation)) {
      sendPage(
        res,
        403,
        messagePage(
          'Second factor required',
          'This account must set up a second factor before it can open an admin session. Sign in again.',
          {
            link: {
              href: `/login?tenant=${encodeURIComponent(pending.tenant)}`,
              text: 'Sign in again',
            },
          },
        ),
      );
      return;
    }
    // A fresh session id on every sign-in: a planted cookie can never become a signed-in session.
    await deps.sessions.end(req, res);
    await deps.sessions.start(req, res, {
      tenant: pending.tenant,
      sub: claims.sub,
      email: typeof claims.email === 'string' ? claims.email : null,
      role: person.role,
      tokenVersion: typeof person.token_version === 'number' ? person.token_version : 0,
      factorGeneration: person.factor_generation ?? 0,
      ...factorStateOf(claims),
      // The ID token's `factors_enrolled`, or the person's factors as the user view counts them.
      ...(hasSecondFactor(person) ? { stepUpRequired: true } : {}),
      // Kept (encrypted, server-side) for sign-out: with it as the hint, the realm ends its session without asking.
      ...(idToken === undefined ? {} : { idToken }),
    });
    res.setHeader('cache-control', 'no-store');
    res.redirect(303, safeReturnTo(pending.returnTo));
  }

  /** A step-up's callback: the same person as the session that asked, whose factor time it refreshes. */
  async function finishStepUp(
    req: Request,
    res: Response,
    pending: PendingSignIn,
    claims: oidc.IDToken,
  ): Promise<void> {
    const loaded = await deps.sessions.load(req);
    if (
      !loaded ||
      loaded.session.handle !== pending.stepUpSession ||
      loaded.session.tenant !== pending.tenant ||
      loaded.session.sub !== claims.sub
    ) {
      sendPage(
        res,
        403,
        messagePage(
          'Check refused',
          'This second-factor check was completed by another person or for another session. Sign in again.',
          { link: { href: '/', text: 'Sign in' } },
        ),
      );
      return;
    }
    await recordStepUp(deps.store, loaded.id, loaded.session, claims);
    res.setHeader('cache-control', 'no-store');
    res.redirect(303, safeReturnTo(pending.returnTo));
  }

  async function signOutPageOf(req: Request, res: Response): Promise<void> {
    const loaded = await deps.sessions.load(req);
    if (!loaded) {
      res.redirect(303, '/');
      return;
    }
    sendPage(res, 200, signOutPage(loaded.session));
  }

  async function signOut(req: Request, res: Response): Promise<void> {
    const loaded = await deps.sessions.load(req);
    if (loaded && !deps.sessions.csrfValid(req, loaded.id)) {
      res.status(403).json({
        error: 403,
        message:
          'Missing or invalid CSRF token: send the csrf_token cookie value in the X-CSRF-Token header',
      });
      return;
    }
    await deps.sessions.end(req, res);
    let redirect = '/';
    if (loaded) {
      try {
        const config = await deps.oidc.configFor(loaded.session.tenant);
        // With the sign-in's ID token the realm knows this browser's session is the portal's
        // own and ends it at once; without one (a session older than the hint) it asks first.
        const hint: Record<string, string> =
          loaded.session.idToken === undefined ? {} : { id_token_hint: loaded.session.idToken };
        redirect = deps.oidc.toPublic(
          oidc.buildEndSessionUrl(config, {
            client_id: PORTAL_CLIENT_ID,
            post_logout_redirect_uri: `${portalBase}/`,
            ...hint,
          }),
        ).href;
      } catch {
        // The realm session outlives ours; the portal session is gone either way.
      }
    }
    res.setHeader('cache-control', 'no-store');
    res.json({ redirect });
  }

  const page = pageRoutes(deps.logger);
  return [
    page('/login', [startSignIn], ['tenant', 'return_to']),
    // `state` and `error` read here, the rest by openid-client's code exchange.
    page('/auth/callback', [finishSignIn], ['state', 'code', 'iss', 'error', 'error_description']),
    page('/step-up', [startStepUp], ['return_to', 'action']),
    page('/logout', [signOutPageOf]),
    // Answers JSON (`{redirect}`, or 403 in the `Error` shape), but a failure to reach Redis is a page, as on every portal route.
    page('/logout', [signOut], undefined, 'POST'),
  ];
}
