export {
  createRevocationSync,
  revocationSyncFromConfig,
  type RevocationSync,
  type RevocationSyncState,
} from './revocation-sync.js';
export type {
  CarriedTraceContext,
  ConsumerSpan,
  RevocationSyncConfig,
  RevocationSyncOptions,
  SpanLike,
} from './revocation-sync-options.js';
export { REVOCATION_CHANNEL, type RevocationEntry } from '../platform/revocation-types.js';
