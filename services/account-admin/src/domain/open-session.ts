import type { Session, SessionStore } from '../data-access/session-store.js';

/** Opens a session for a user who just signed in (its role just confirmed); returns its new id. */
export function openSession(store: SessionStore, user: Omit<Session, 'checkedAt' | 'createdAt'>, ttlSeconds: number): Promise<string> {
  const now = Date.now();
  return store.create({ ...user, checkedAt: now, createdAt: now }, ttlSeconds);
}
