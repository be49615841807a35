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
import type { Route } from '@plant/shared/http';
import { pageRoutes } from '../portal/index.js';
import { finishSignIn } from './finish-sign-in.js';
import { signInContext, type SignInDeps } from './sign-in-flow.js';
import { signOut, signOutPageOf } from './sign-out.js';
import { startSignIn } from './start-sign-in.js';
import { startStepUp } from './step-up.js';

export type { SignInDeps } from './sign-in-flow.js';

/** The routes of sign-in, step-up and sign-out; each flow is its own module. */
export function signInRoutes(deps: SignInDeps): Route[] {
  const ctx = signInContext(deps);
  const page = pageRoutes(deps.logger);
  return [
    page('/login', [(req, res) => startSignIn(ctx, req, res)], ['tenant', 'return_to']),
    // `state` and `error` read here, the rest by openid-client's code exchange.
    page(
      '/auth/callback',
      [(req, res) => finishSignIn(ctx, req, res)],
      ['state', 'code', 'iss', 'error', 'error_description'],
    ),
    page('/step-up', [(req, res) => startStepUp(ctx, req, res)], ['return_to', 'action']),
    page('/logout', [(req, res) => signOutPageOf(ctx, req, res)]),
    // Answers JSON (`{redirect}`, or 403 in the `Error` shape), but a failure to reach Redis is a page, as on every portal route.
    page('/logout', [(req, res) => signOut(ctx, req, res)], undefined, 'POST'),
  ];
}
