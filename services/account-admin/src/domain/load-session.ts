import { AppError } from '@plant/shared';
import type { Session, SessionStore } from '../data-access/session-store.js';
import type { TokenServiceClient } from '@plant/shared';
import { TokenServiceUnavailable } from './errors.js';

/** How often a session's role is re-read from the token service (a demoted admin loses rights within this). */
const ROLE_RECHECK_MS = 30_000;

export interface LoadSessionDeps {
  store: SessionStore;
  tokenService: TokenServiceClient;
}

/** The session with this id, its role re-confirmed at most every ROLE_RECHECK_MS; undefined when there is none (any more). */
export async function loadSession({ store, tokenService }: LoadSessionDeps, id: string): Promise<Session | undefined> {
  const session = await store.get(id);
  if (session === undefined) return undefined;
  if (Date.now() - session.checkedAt < ROLE_RECHECK_MS) return session;
  try {
    const user = await tokenService.getUser(session.tenant, session.sub);
    const refreshed: Session = { ...session, role: user.role, email: user.email, checkedAt: Date.now() };
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
