/**
 * The portal's cookies: `aa_session` (HttpOnly, the session id), `csrf_token` (readable by
 * the page script, sent back in `X-CSRF-Token`), `aa_signin` (HttpOnly, binds a sign-in to
 * the browser that started it). All SameSite=Lax, Secure when the portal is served over https.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { constantTimeEquals } from '@plant/shared/security';
import {
  endSession,
  loadSession,
  openSession,
  userAgentOf,
  type LoadSessionDeps,
  type NewSession,
  type Session,
} from './portal-sessions.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The portal session of a page request, set by the portal's `requireSession`. */
      portalSession?: Session;
    }
  }
}

export const SESSION_COOKIE = 'aa_session';
export const CSRF_COOKIE = 'csrf_token';
export const SIGNIN_COOKIE = 'aa_signin';
export const CSRF_HEADER = 'x-csrf-token';

export function readCookies(req: Request): Record<string, string> {
  const header = req.headers.cookie;
  const cookies: Record<string, string> = {};
  if (typeof header !== 'string' || header.length > 8192) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const raw = part.slice(eq + 1).trim();
    if (name === '' || name in cookies) continue;
    try {
      cookies[name] = decodeURIComponent(raw);
    } catch {
      // A malformed value is ignored, like an absent cookie.
    }
  }
  return cookies;
}

/*
 * HMACs under SESSION_SECRET, each with its own prefix so no value can stand for another
 * (the session store keys its records with `session:` and `signin:`).
 */

/** The CSRF token of a session: derived, so only this server can mint one matching the session. */
function csrfTokenFor(secret: string, sessionId: string): string {
  return createHmac('sha256', secret).update(`csrf:${sessionId}`).digest('base64url');
}

/** What a pending sign-in keeps of the browser-binding cookie's value. */
export function bindingHash(secret: string, binding: string): string {
  return createHmac('sha256', secret).update(`binding:${binding}`).digest('base64url');
}

/** A fresh browser-binding cookie value. */
export const randomBinding = () => randomBytes(32).toString('base64url');

export interface PortalSessions {
  /** The request's session, checked against the revocation map (`loadSession`); undefined when signed out. */
  load(req: Request): Promise<{ id: string; session: Session } | undefined>;
  /** Opens a session for the person who signed in, recording the request's browser and address. */
  start(
    req: Request,
    res: Response,
    person: Omit<NewSession, 'userAgent' | 'address'>,
  ): Promise<void>;
  end(req: Request, res: Response): Promise<void>;
  /** Double submit: the header equals the cookie, and both are this session's token. */
  csrfValid(req: Request, sessionId: string): boolean;
  cookieOptions(
    maxAgeMs?: number,
    httpOnly?: boolean,
  ): { httpOnly: boolean; secure: boolean; sameSite: 'lax'; path: string; maxAge?: number };
}

export interface PortalSessionOptions extends LoadSessionDeps {
  secret: string;
  secure: boolean;
  ttlSeconds: number;
}

export function createPortalSessions({
  store,
  tokenService,
  revocation,
  secret,
  secure,
  ttlSeconds,
}: PortalSessionOptions): PortalSessions {
  const cookieOptions = (maxAgeMs?: number, httpOnly = true) => ({
    httpOnly,
    secure,
    sameSite: 'lax' as const,
    path: '/',
    ...(maxAgeMs === undefined ? {} : { maxAge: maxAgeMs }),
  });

  const sessionDeps = { store, tokenService, revocation };

  return {
    cookieOptions,
    async load(req) {
      const id = readCookies(req)[SESSION_COOKIE];
      if (id === undefined || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
      const session = await loadSession(sessionDeps, id, {
        address: req.ip ?? null,
        userAgent: userAgentOf(req.headers['user-agent']),
      });
      return session === undefined ? undefined : { id, session };
    },
    async start(req, res, person) {
      const id = await openSession(
        store,
        { ...person, userAgent: userAgentOf(req.headers['user-agent']), address: req.ip ?? null },
        ttlSeconds,
      );
      res.cookie(SESSION_COOKIE, id, cookieOptions(ttlSeconds * 1000));
      res.cookie(CSRF_COOKIE, csrfTokenFor(secret, id), cookieOptions(ttlSeconds * 1000, false));
    },
    async end(req, res) {
      const id = readCookies(req)[SESSION_COOKIE];
      if (id !== undefined) await endSession(store, id);
      res.clearCookie(SESSION_COOKIE, cookieOptions());
      res.clearCookie(CSRF_COOKIE, cookieOptions(undefined, false));
    },
    csrfValid(req, sessionId) {
      const header = req.headers[CSRF_HEADER];
      const cookie = readCookies(req)[CSRF_COOKIE];
      if (typeof header !== 'string' || cookie === undefined) return false;
      return (
        constantTimeEquals(header, cookie) &&
        constantTimeEquals(cookie, csrfTokenFor(secret, sessionId))
      );
    },
  };
}
