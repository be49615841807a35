import type { Knex } from '@plant/shared';
import type { KeyEncryption } from './key-encryption.js';
import type { RevocationPublisher } from './revocation-publisher.js';

/** What the use cases need: plain dependencies, no HTTP. */
export interface IdentityContext {
  db: Knex;
  secretPepper: string;
  publisher: RevocationPublisher;
}

export interface KeyContext {
  db: Knex;
  encryption: KeyEncryption;
}
