/**
 * The realms wing. Owns: realms (tenants): creating one with its first user and key, their naming
 * (issuer, paths, the portal client), the realm lock, the realm repository, the public realm mount
 * and token route, and the internal realm routes.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: oidc, people, platform, sign-in, signing-keys
 */
export { internalRealmRoutes } from './internal-realm-routes.js';
export { lockRealm } from './realm-lock.js';
export {
  INTROSPECTION_PATH,
  KEY_ROTATION_CHANNEL,
  issuerOf,
  keyChangeMessage,
  parseKeyChangeMessage,
  realmPath,
} from './realm-naming.js';
export { createRealmRepository } from './realm-repository.js';
export type { RealmRepository } from './realm-repository.js';
export { realmMount, tokenRoute } from './realm-routes.js';
export { assertTenantExists, createTenant } from './tenants.js';
