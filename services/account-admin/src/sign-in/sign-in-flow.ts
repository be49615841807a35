/**
 * What the sign-in and step-up flows share: their deps, the context every step gets, and the
 * steps both starts take (the start budget, the redirect to the realm).
 */
import type { Logger } from '@plant/shared/logging';
import { refusalDelay, type SourceBudget } from '@plant/shared/security';
import type { TokenServiceClient } from '@plant/shared/token-service-client';
import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import { messagePage, sendPage } from '../portal/index.js';
import {
  bindingHash,
  randomBinding,
  SIGN_IN_TTL_SECONDS,
  SIGNIN_COOKIE,
  savePendingSignIn,
  type PendingSignIn,
  type PortalSessions,
  type SessionStore,
} from '../sessions/index.js';
import type { OidcClients } from './oidc-clients.js';

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

/** The deps and what the routes derive from them once: every step of the flows takes it. */
export interface SignInContext {
  deps: SignInDeps;
  /** The portal's URL without a trailing slash. */
  portalBase: string;
  /** Holds a refusal back a second (`refusalDelay`). */
  delayed: ReturnType<typeof refusalDelay>;
}

export function signInContext(deps: SignInDeps): SignInContext {
  return {
    deps,
    portalBase: deps.portalUrl.replace(/\/+$/, ''),
    // A second a refusal: a flood that ignores Retry-After gets one answer per connection a second.
    delayed: refusalDelay({ delayMs: 1000, maxHeld: 1000 }),
  };
}

export const unavailablePage = () =>
  messagePage(
    'Sign-in is unavailable',
    'Sign-in is temporarily unavailable. Try again in a moment.',
  );

/** "a minute", "7 minutes", "30 seconds". */
export function waitText(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? 'a second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? 'a minute' : `${minutes} minutes`;
}

/**
 * Takes a point of the source's start budget (and everyone's), before any realm lookup: a
 * flood of made-up names costs the token service nothing either. False: answered 429.
 */
export async function takeStartBudget(
  { deps, delayed }: SignInContext,
  req: Request,
  res: Response,
): Promise<boolean> {
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
export async function redirectToRealm(
  { deps }: SignInContext,
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
