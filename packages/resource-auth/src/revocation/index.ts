export { createRevocationSync, type RevocationSync, type RevocationSyncOptions, type RevocationSyncState } from './revocation-sync.js';
export { REVOCATION_CHANNEL, type RevocationEntry } from './revocation-entry.js';
