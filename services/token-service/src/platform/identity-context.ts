import type { Repositories } from '../repositories.js';
import type { TrustPolicy, ClientSecretDigester } from '../credentials/index.js';
import type { KeyEncryption } from '../signing-keys/index.js';
import type { RevocationPublisher } from '../revocation/index.js';

/**
 * What the use cases work with: repositories (objects that own their queries and
 * transactions, never a Knex handle) and the service's keys. Each use case names the part it
 * needs (`Pick<IdentityContext, ...>`), so the CLI can build only that part.
 */
export interface IdentityContext extends Repositories {
  /** The only holder of SECRET_PEPPER. */
  secrets: ClientSecretDigester;
  encryption: KeyEncryption;
  publisher: RevocationPublisher;
  /** What a trusted workload's issuer may be (FEDERATION_* configuration). */
  trustPolicy: TrustPolicy;
}
