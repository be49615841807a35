/**
 * The realm-creation wing. Owns: creating a realm (tenant) with its first Account Admin, their
 * password and the realm's first signing key, in one transaction (`create-realm.ts` and its
 * repository). It sits above people, passwords and signing-keys, which take the realm's lock and
 * naming from the realms wing below them.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: passwords, people, platform, signing-keys
 */
export { createTenant } from './create-realm.js';
export { createRealmCreationRepository } from './realm-creation-repository.js';
export type { RealmCreationRepository } from './realm-creation-repository.js';
