/**
 * The step-up flow. GET /step-up?return_to=…[&action=…]: the realm verifies a second factor of
 * the signed-in person again (`acr_values` factor, `max_age=0`), or runs an enrolment first
 * (`plant_action`); the callback (finish-sign-in.ts) hands a step-up to `finishStepUp`, which
 * refreshes this session's factor time and returns to `return_to`.
 */
import type { Request, Response } from 'express';
import type * as oidc from 'openid-client';
import { FACTOR_ACR } from '../platform/index.js';
import { messagePage, sendPage } from '../portal/index.js';
import { recordStepUp, type PendingSignIn, type Session } from '../sessions/index.js';
import { safeReturnTo } from './return-to.js';
import { redirectToRealm, takeStartBudget, type SignInContext } from './sign-in-flow.js';

/** What a step-up may ask the realm to run before the factor check finishes (its `plant_action`). */
const STEP_UP_ACTIONS = new Set(['enrol-passkey', 'enrol-totp', 'recovery-codes']);

export async function startStepUp(ctx: SignInContext, req: Request, res: Response): Promise<void> {
  const returnTo = safeReturnTo(req.query.return_to);
  const action = req.query.action;
  if (!knownStepUpAction(res, action)) return;
  const asking = await sessionAsking(ctx, req, res, returnTo);
  if (asking === undefined) return;
  if (!(await takeStartBudget(ctx, req, res))) return;
  const { session, handle } = asking;
  await redirectToRealm(
    ctx,
    res,
    { tenant: session.tenant, returnTo, purpose: 'step-up', stepUpSession: handle },
    stepUpParameters(session, action),
  );
}

/** No action, or one of STEP_UP_ACTIONS; anything else is answered 400. */
function knownStepUpAction(res: Response, action: unknown): boolean {
  if (action !== undefined && !(typeof action === 'string' && STEP_UP_ACTIONS.has(action))) {
    sendPage(
      res,
      400,
      messagePage('Unknown action', 'That security action does not exist. Go back and retry.'),
    );
    return false;
  }
  return true;
}

/** The portal session that asks (and its handle); signed out: to sign-in, back here after. */
async function sessionAsking(
  { deps }: SignInContext,
  req: Request,
  res: Response,
  returnTo: string,
): Promise<{ session: Session; handle: string } | undefined> {
  const loaded = await deps.sessions.load(req);
  if (!loaded || loaded.session.handle === undefined) {
    res.redirect(303, `/?return_to=${encodeURIComponent(returnTo)}`);
    return undefined;
  }
  return { session: loaded.session, handle: loaded.session.handle };
}

/** RFC 9470's challenge for the realm, the person's e-mail as hint, and the enrolment asked for. */
function stepUpParameters(session: Session, action: unknown): Record<string, string> {
  return {
    acr_values: FACTOR_ACR,
    max_age: '0',
    ...(session.email === null ? {} : { login_hint: session.email }),
    ...(typeof action === 'string' ? { plant_action: action } : {}),
  };
}

/** A step-up's callback: the same person as the session that asked, whose factor time it refreshes. */
export async function finishStepUp(
  { deps }: SignInContext,
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
