/**
 * The portal's cookies: `aa_session` (HttpOnly, the session id), `csrf_token` (readable by
 * the page script, sent back in `X-CSRF-Token`), `aa_signin` (HttpOnly, binds a sign-in to
 * the browser that started it). All SameSite=Lax, Secure when the portal is served over https.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { csrfTokenFor, type Session, type SessionStore } from '../../data-access/session-store.js';
import type { TokenServiceClient } from '../../data-access/token-service-client.js';
import { AppError } from '@plant/shared';
import { TokenServiceUnavailable } from '../../domain/admin-errors.js';
import type { Actor } from '../../domain/actor.js';

export const SESSION_COOKIE = 'aa_session';
export const CSRF_COOKIE = 'csrf_token';
export const SIGNIN_COOKIE = 'aa_signin';
export const CSRF_HEADER = 'x-csrf-token';

/** How often a session's role is re-read from the token service (a demoted admin loses rights within this). */
const ROLE_RECHECK_MS = 30_000;

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

export function safeEquals(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export interface PortalSessions {
  /** The request's session, with its role re-confirmed at most every 30 s; undefined when signed out. */
  load(req: Request): Promise<{ id: string; session: Session } | undefined>;
  start(res: Response, session: Omit<Session, 'checkedAt' | 'createdAt'>): Promise<void>;
  end(req: Request, res: Response): Promise<void>;
  /** Double submit: the header equals the cookie, and both are this session's token. */
  csrfValid(req: Request, sessionId: string): boolean;
  cookieOptions(maxAgeMs?: number, httpOnly?: boolean): { httpOnly: boolean; secure: boolean; sameSite: 'lax'; path: string; maxAge?: number };
}

export interface PortalSessionOptions {
  store: SessionStore;
  tokenService: TokenServiceClient;
  secret: string;
  secure: boolean;
  ttlSeconds: number;
}

export function createPortalSessions({ store, tokenService, secret, secure, ttlSeconds }: PortalSessionOptions): PortalSessions {
  const cookieOptions = (maxAgeMs?: number, httpOnly = true) => ({
    httpOnly,
    secure,
    sameSite: 'lax' as const,
    path: '/',
    ...(maxAgeMs === undefined ? {} : { maxAge: maxAgeMs }),
  });

  return {
    cookieOptions,
    async load(req) {
      const id = readCookies(req)[SESSION_COOKIE];
      if (id === undefined || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
      const session = await store.get(id);
      if (session === undefined) return undefined;
      if (Date.now() - session.checkedAt < ROLE_RECHECK_MS) return { id, session };
      try {
        const user = await tokenService.getUser(session.tenant, session.sub);
        const refreshed: Session = { ...session, role: user.role, email: user.email, checkedAt: Date.now() };
        await store.update(id, refreshed);
        return { id, session: refreshed };
      } catch (err) {
        // Token service down: keep the known role (re-checked once it answers). Every
        // management action needs the token service anyway, so nothing can be changed meanwhile.
        if (err instanceof TokenServiceUnavailable) return { id, session };
        if (!(err instanceof AppError) || err.status !== 404) throw err;
        // The user (or the tenant) no longer exists: the session ends.
        await store.destroy(id);
        return undefined;
      }
    },
    async start(res, session) {
      const now = Date.now();
      const id = await store.create({ ...session, checkedAt: now, createdAt: now }, ttlSeconds);
      res.cookie(SESSION_COOKIE, id, cookieOptions(ttlSeconds * 1000));
      res.cookie(CSRF_COOKIE, csrfTokenFor(secret, id), cookieOptions(ttlSeconds * 1000, false));
    },
    async end(req, res) {
      const id = readCookies(req)[SESSION_COOKIE];
      if (id !== undefined) await store.destroy(id);
      res.clearCookie(SESSION_COOKIE, cookieOptions());
      res.clearCookie(CSRF_COOKIE, cookieOptions(undefined, false));
    },
    csrfValid(req, sessionId) {
      const header = req.headers[CSRF_HEADER];
      const cookie = readCookies(req)[CSRF_COOKIE];
      if (typeof header !== 'string' || cookie === undefined) return false;
      return safeEquals(header, cookie) && safeEquals(cookie, csrfTokenFor(secret, sessionId));
    },
  };
}

export function actorFromSession(session: Session): Actor {
  return { tenant: session.tenant, sub: session.sub, email: session.email, type: 'user', role: session.role, via: 'session' };
}
