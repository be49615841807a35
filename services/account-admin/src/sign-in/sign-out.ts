/**
 * GET /logout asks to confirm; POST /logout (CSRF-checked) ends the portal session and answers
 * where to end the realm session: the realm's end_session_endpoint with the sign-in's ID token
 * as `id_token_hint`, so the realm's own sign-in session in that browser ends too.
 */
import { PORTAL_CLIENT_ID } from '@plant/shared/api';
import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import { sendPage } from '../portal/index.js';
import type { Session } from '../sessions/index.js';
import type { SignInContext } from './sign-in-flow.js';
import { signOutPage } from './sign-in-pages.js';

export async function signOutPageOf(
  { deps }: SignInContext,
  req: Request,
  res: Response,
): Promise<void> {
  const loaded = await deps.sessions.load(req);
  if (!loaded) {
    res.redirect(303, '/');
    return;
  }
  sendPage(res, 200, signOutPage(loaded.session));
}

export async function signOut(ctx: SignInContext, req: Request, res: Response): Promise<void> {
  const { deps } = ctx;
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
  const redirect = loaded ? await realmSignOutUrl(ctx, loaded.session) : '/';
  res.setHeader('cache-control', 'no-store');
  res.json({ redirect });
}

/** The realm's end-session URL for the session's tenant, or `/` when the realm cannot be reached. */
async function realmSignOutUrl(
  { deps, portalBase }: SignInContext,
  session: Session,
): Promise<string> {
  try {
    const config = await deps.oidc.configFor(session.tenant);
    // With the sign-in's ID token the realm knows this browser's session is the portal's
    // own and ends it at once; without one (a session older than the hint) it asks first.
    const hint: Record<string, string> =
      session.idToken === undefined ? {} : { id_token_hint: session.idToken };
    return deps.oidc.toPublic(
      oidc.buildEndSessionUrl(config, {
        client_id: PORTAL_CLIENT_ID,
        post_logout_redirect_uri: `${portalBase}/`,
        ...hint,
      }),
    ).href;
  } catch {
    // The realm session outlives ours; the portal session is gone either way.
    return '/';
  }
}
