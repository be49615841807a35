/**
 * The quotas wing. Owns: grant quotas per service account and realm, and their coalesced Redis
 * counter (decision 0019).
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: credentials, platform
 */
export { createGrantQuotaCounter } from './grant-quota-counter.js';
export { GrantQuotas } from './grant-quotas.js';
