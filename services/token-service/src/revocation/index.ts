/**
 * The revocation wing. Owns: the revocation feed resource servers follow (decision 0002):
 * snapshot, changes, pruning, the Redis publisher, and its internal routes.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: platform
 */
export { createRevocationFeedRepository } from './revocation-feed-repository.js';
export type { RevocationFeedRepository } from './revocation-feed-repository.js';
export { RevocationPruner, revocationHorizonSeconds } from './revocation-feed.js';
export { REPUBLISH_MAX_MS, RevocationPublisher } from './revocation-publisher.js';
export { REVOCATION_CHANGES_PATH, revocationRoutes } from './revocation-routes.js';
