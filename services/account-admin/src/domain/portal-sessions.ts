/**
 * Portal sessions: who signed in, and the role the token service last confirmed. Sessions and
 * pending sign-ins live server-side (data-access/session-store.ts; the browser holds only a
 * random id); the portal opens, loads and ends them here, and keeps a sign-in in progress
 * (saved at the start, taken once at the callback). A session's role is re-read from the token service now and
 * then, so a demoted admin loses rights without signing out.
 */
import { AppError } from '@plant/shared/api';
import type { TokenServiceClient } from '@plant/shared/token-service-client';
import type { PendingSignIn, Session, SessionStore } from '../data-access/session-store.js';
import type { Actor } from './actor.js';
import { TokenServiceUnavailable } from './errors.js';

export type { PendingSignIn, Session, SessionStore } from '../data-access/session-store.js';

export function actorFromSession(session: Session): Actor {
  return {
    tenant: session.tenant,
    sub: session.sub,
    email: session.email,
    type: 'user',
    role: session.role,
    via: 'session',
  };
}

/** Opens a session for a user who just signed in (its role just confirmed); returns its new id. */
export function openSession(
  store: SessionStore,
  user: Omit<Session, 'checkedAt' | 'createdAt'>,
  ttlSeconds: number,
): Promise<string> {
  const now = Date.now();
  return store.create({ ...user, checkedAt: now, createdAt: now }, ttlSeconds);
}

/** How often a session's role is re-read from the token service (a demoted admin loses rights within this). */
const ROLE_RECHECK_MS = 30_000;

export interface LoadSessionDeps {
  store: SessionStore;
  tokenService: TokenServiceClient;
}

/** The session with this id, its role re-confirmed at most every ROLE_RECHECK_MS; undefined when there is none (any more). */
export async function loadSession(
  { store, tokenService }: LoadSessionDeps,
  id: string,
): Promise<Session | undefined> {
  const session = await store.get(id);
  if (session === undefined) return undefined;
  if (Date.now() - session.checkedAt < ROLE_RECHECK_MS) return session;
  try {
    const user = await tokenService.getUser(session.tenant, session.sub);
    const refreshed: Session = {
      ...session,
      role: user.role,
      email: user.email,
      checkedAt: Date.now(),
    };
    await store.update(id, refreshed);
    return refreshed;
  } catch (err) {
    // Token service down: keep the known role (re-checked once it answers). Every
    // management action needs the token service anyway, so nothing can be changed meanwhile.
    if (err instanceof TokenServiceUnavailable) return session;
    if (!(err instanceof AppError) || err.status !== 404) throw err;
    // The user (or the tenant) no longer exists: the session ends.
    await store.destroy(id);
    return undefined;
  }
}

export async function endSession(store: SessionStore, id: string): Promise<void> {
  await store.destroy(id);
}

/** How long a started sign-in may take to come back to the callback. */
export const SIGN_IN_TTL_SECONDS = 600;

/** Remembers a started sign-in under its OAuth `state` until the callback takes it. */
export async function savePendingSignIn(
  store: SessionStore,
  state: string,
  pending: PendingSignIn,
): Promise<void> {
  await store.savePendingSignIn(state, pending, SIGN_IN_TTL_SECONDS);
}

/** The sign-in started under this `state`, removed as it is read: a state is good for one callback only. */
export function takePendingSignIn(
  store: SessionStore,
  state: string,
): Promise<PendingSignIn | undefined> {
  return store.takePendingSignIn(state);
}
