import type { PendingSignIn, SessionStore } from '../data-access/session-store.js';

/** The sign-in started under this `state`, removed as it is read: a state is good for one callback only. */
export function takePendingSignIn(store: SessionStore, state: string): Promise<PendingSignIn | undefined> {
  return store.takePendingSignIn(state);
}
