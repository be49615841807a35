import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { bearerChallenge, type BearerAuth } from '@plant/resource-auth';
import type { TokenServiceClient } from '@plant/shared/token-service-client';
import {
  type Actor,
  CsrfRejected,
  FACTOR_ACR,
  NotAccountAdmin,
  NotSignedIn,
  TokenServiceUnavailable,
  hasSecondFactor,
} from '../platform/index.js';
import { actorFromSession } from './portal-sessions.js';
import type { PortalSessions } from './session-cookies.js';

/** The `realm` of this API's `WWW-Authenticate: Bearer` challenges. */
export const API_REALM = 'account-admin';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * `Authorization: Bearer` (verified by the shared middleware) wins when present; otherwise
 * the portal session, whose state-changing requests must carry the CSRF token. Bearer
 * requests need no CSRF token: a browser never attaches one on its own.
 */
export function authenticateApi(
  auth: BearerAuth,
  sessions: PortalSessions,
  tokenService: TokenServiceClient,
): RequestHandler {
  /**
   * Tokens carry no email: a user's is looked up where it is shown or recorded (`created_by`,
   * audit, /me). The same read says whether the person has a second factor, so a change by a
   * user token needs a recent one (its `acr`/`auth_time`) as a portal session's does.
   */
  async function withEmail(req: Request, actor: Actor): Promise<Actor> {
    if (actor.type !== 'user' || (SAFE_METHODS.has(req.method) && req.path !== '/me')) return actor;
    try {
      const user = await tokenService.getUser(actor.tenant, actor.sub);
      return {
        ...actor,
        email: user.email,
        ...(hasSecondFactor(user) ? { stepUpRequired: true } : {}),
      };
    } catch (err) {
      if (err instanceof TokenServiceUnavailable) throw err;
      return actor;
    }
  }

  return function authenticate(req: Request, res: Response, next: NextFunction): void {
    if (req.headers.authorization !== undefined) {
      auth.middleware(req, res, (err?: unknown) => {
        if (err !== undefined) return next(err);
        const p = req.auth!;
        withEmail(req, {
          tenant: p.tenant,
          sub: p.sub,
          email: null,
          type: p.principalType,
          role: p.role,
          via: 'bearer',
          ...(p.acr === FACTOR_ACR && p.authTime !== undefined
            ? { factorAt: p.authTime * 1000 }
            : {}),
        }).then((actor) => {
          req.actor = actor;
          next();
        }, next);
      });
      return;
    }
    sessions.load(req).then((loaded) => {
      if (loaded === undefined) {
        next(
          new NotSignedIn(undefined, {
            headers: { 'www-authenticate': bearerChallenge(API_REALM) },
          }),
        );
        return;
      }
      if (!SAFE_METHODS.has(req.method) && !sessions.csrfValid(req, loaded.id)) {
        next(new CsrfRejected());
        return;
      }
      req.actor = actorFromSession(loaded.session);
      if (loaded.session.handle !== undefined) req.sessionHandle = loaded.session.handle;
      next();
    }, next);
  };
}

/** RFC 6750 §3.1: a bearer caller refused for its role gets `insufficient_scope` in the challenge. */
export function bearerForbiddenChallenge(): ErrorRequestHandler {
  return function addChallenge(
    err: unknown,
    req: Request,
    _res: Response,
    next: NextFunction,
  ): void {
    if (err instanceof NotAccountAdmin && req.actor?.via === 'bearer') {
      err.headers['www-authenticate'] = bearerChallenge(
        API_REALM,
        'insufficient_scope',
        err.message,
      );
    }
    next(err);
  };
}
