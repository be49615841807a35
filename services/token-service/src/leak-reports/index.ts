/**
 * The leak-reports wing. Owns: secret-scanning leak reports: the reporter's signature keys, the
 * report route, and revoking the secrets reported.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: credentials, platform
 */
export { SecretScanningKeys } from './secret-scanning-keys.js';
export { secretScanningRoute } from './secret-scanning-route.js';
export type { SecretScanningDeps } from './secret-scanning-route.js';
