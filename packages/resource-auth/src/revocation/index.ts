export {
  createRevocationSync,
  revocationSyncFromConfig,
  type RevocationSync,
  type RevocationSyncState,
} from './revocation-sync.js';
export type { RevocationSyncConfig, RevocationSyncOptions } from './revocation-sync-options.js';
export { REVOCATION_CHANNEL, type RevocationEntry } from '@plant/shared/token-service-client';
