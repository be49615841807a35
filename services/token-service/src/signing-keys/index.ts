/**
 * The signing-keys wing. Owns: each realm's signing keys: creation, rotation, encryption at rest,
 * the published keys and the signing-algorithm routes.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: changes, credentials, platform, realms
 */
export { KeyEncryption } from './key-encryption.js';
export { createSigningKeyRepository, insertSigningKey } from './signing-key-repository.js';
export type { NewSigningKey, SigningKeyRepository } from './signing-key-repository.js';
export { NodeSigningKey } from './signing-key.js';
export {
  createSigningKey,
  decryptSigningKey,
  getSigningAlgorithm,
  publishRotation,
  rotateSigningKey,
} from './signing-keys.js';
export { publishedKeysRoute, signingRoutes } from './signing-routes.js';
