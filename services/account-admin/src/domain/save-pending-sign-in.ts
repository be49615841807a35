import type { PendingSignIn, SessionStore } from '../data-access/session-store.js';

/** How long a started sign-in may take to come back to the callback. */
export const SIGN_IN_TTL_SECONDS = 600;

/** Remembers a started sign-in under its OAuth `state` until the callback takes it. */
export async function savePendingSignIn(store: SessionStore, state: string, pending: PendingSignIn): Promise<void> {
  await store.savePendingSignIn(state, pending, SIGN_IN_TTL_SECONDS);
}
