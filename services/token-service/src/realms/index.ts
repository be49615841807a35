/**
 * The realms wing. Owns: realms (tenants): their naming (issuer, paths, the portal client, the
 * key channel), the realm lock, the realm repository and the existence check, and the internal
 * realm routes. Low in the graph: the wings of a realm's contents take its lock and naming here;
 * creating a realm is the realm-creation wing's, the public realm mount oidc's.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: platform
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
export { assertTenantExists } from './tenants.js';
