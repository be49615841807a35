/**
 * GET /auth/callback, a short pipeline: the pending start this browser made (state and binding
 * cookie), the realm's refusal if it sent one, the code exchange, the claims an admin session
 * needs; then a step-up refreshes the session that asked (step-up.ts) and a sign-in opens a
 * fresh session with the person's current role and token version. Each step answers the
 * browser itself when the callback stops there.
 */
import type { User } from '@plant/shared/token-service-client';
import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import { constantTimeEquals } from '@plant/shared/security';
import { hasSecondFactor, TokenServiceUnavailable, type Role } from '../platform/index.js';
import { messagePage, sendPage } from '../portal/index.js';
import {
  bindingHash,
  factorStateOf,
  readCookies,
  sessionVoidedByFactors,
  SIGNIN_COOKIE,
  takePendingSignIn,
  type PendingSignIn,
} from '../sessions/index.js';
import { safeReturnTo } from './return-to.js';
import { unavailablePage, type SignInContext } from './sign-in-flow.js';
import { finishStepUp } from './step-up.js';

const ROLES: readonly Role[] = ['View', 'Edit', 'Account Admin'];

export async function finishSignIn(ctx: SignInContext, req: Request, res: Response): Promise<void> {
  const started = await takeStartOfThisBrowser(ctx, req, res);
  if (started === undefined) return;
  const { state, pending } = started;
  if (refusedAtRealm(req, res, pending)) return;
  const exchanged = await exchangeCode(ctx, req, res, pending, state);
  if (exchanged === undefined) return;
  const claims = adminClaims(res, pending, exchanged.claims);
  if (claims === undefined) return;
  if (pending.purpose === 'step-up') {
    await finishStepUp(ctx, req, res, pending, claims);
    return;
  }
  await openSignedInSession(ctx, req, res, pending, claims, exchanged.idToken);
}

const signInAgain = (pending: PendingSignIn) => ({
  link: { href: `/login?tenant=${encodeURIComponent(pending.tenant)}`, text: 'Sign in again' },
});

const refusedPage = () =>
  messagePage('Sign-in refused', 'This sign-in cannot open an admin session.');

/**
 * The pending start `state` names, taken once, if this browser's binding cookie matches it
 * (the cookie is cleared either way); otherwise "expired".
 */
async function takeStartOfThisBrowser(
  { deps }: SignInContext,
  req: Request,
  res: Response,
): Promise<{ state: string; pending: PendingSignIn } | undefined> {
  const expired = () => {
    sendPage(
      res,
      400,
      messagePage(
        'Sign-in expired',
        'This sign-in has expired or was started in another browser. Start again.',
      ),
    );
    return undefined;
  };
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
  return { state, pending };
}

/** The realm sent `error` (cancelled, refused): a page that leads back, and true. */
function refusedAtRealm(req: Request, res: Response, pending: PendingSignIn): boolean {
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
    return true;
  }
  if (typeof req.query.error === 'string') {
    sendPage(
      res,
      400,
      messagePage(
        'Sign-in was not completed',
        'The sign-in was cancelled or refused. Start again.',
        signInAgain(pending),
      ),
    );
    return true;
  }
  return false;
}

/** Authorization code + PKCE exchange at the tenant's realm: the ID token's claims and the token. */
async function exchangeCode(
  { deps, portalBase }: SignInContext,
  req: Request,
  res: Response,
  pending: PendingSignIn,
  state: string,
): Promise<{ claims: oidc.IDToken | undefined; idToken: string | undefined } | undefined> {
  try {
    const config = await deps.oidc.configFor(pending.tenant);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(req.originalUrl, portalBase), {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    return { claims: tokens.claims(), idToken: tokens.id_token };
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
      messagePage(
        'Sign-in failed',
        'The sign-in could not be completed. Start again.',
        signInAgain(pending),
      ),
    );
    return undefined;
  }
}

/** Claims of the pending tenant with a subject and a portal role; anything else is refused (403). */
function adminClaims(
  res: Response,
  pending: PendingSignIn,
  claims: oidc.IDToken | undefined,
): oidc.IDToken | undefined {
  const role = claims?.role;
  if (
    !claims ||
    claims.tenant !== pending.tenant ||
    typeof claims.sub !== 'string' ||
    typeof role !== 'string' ||
    !ROLES.includes(role as Role)
  ) {
    sendPage(res, 403, refusedPage());
    return undefined;
  }
  return claims;
}

/** A sign-in's callback: the person's current role and token version, then a fresh session. */
async function openSignedInSession(
  ctx: SignInContext,
  req: Request,
  res: Response,
  pending: PendingSignIn,
  claims: oidc.IDToken,
  idToken: string | undefined,
): Promise<void> {
  const person = await personNow(ctx, res, pending, claims);
  if (person === undefined) return;
  if (refusedForFactors(res, pending, person)) return;
  await startSession(ctx, req, res, pending, claims, person, idToken);
}

/** The token version every later request is checked against (and the role as of now). */
async function personNow(
  { deps }: SignInContext,
  res: Response,
  pending: PendingSignIn,
  claims: oidc.IDToken,
): Promise<User | undefined> {
  try {
    return await deps.tokenService.getUser(pending.tenant, claims.sub);
  } catch (err) {
    if (err instanceof TokenServiceUnavailable) sendPage(res, 503, unavailablePage());
    else sendPage(res, 403, refusedPage());
    return undefined;
  }
}

/** The realm enrols such a person before it finishes; a factor taken away meanwhile does not open a session either. */
function refusedForFactors(res: Response, pending: PendingSignIn, person: User): boolean {
  if (!sessionVoidedByFactors(person, person.factor_generation)) return false;
  sendPage(
    res,
    403,
    messagePage(
      'Second factor required',
      'This account must set up a second factor before it can open an admin session. Sign in again.',
      signInAgain(pending),
    ),
  );
  return true;
}

/** A fresh session id on every sign-in: a planted cookie can never become a signed-in session. */
async function startSession(
  { deps }: SignInContext,
  req: Request,
  res: Response,
  pending: PendingSignIn,
  claims: oidc.IDToken,
  person: User,
  idToken: string | undefined,
): Promise<void> {
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
