import type { SessionStore } from '../data-access/session-store.js';

export async function endSession(store: SessionStore, id: string): Promise<void> {
  await store.destroy(id);
}
