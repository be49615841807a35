import type { Knex } from '@plant/shared/db';
import {
  createClientCredentialRepository,
  type ClientCredentialRepository,
} from './client-credential-repository.js';
import {
  createCredentialUsageRepository,
  type CredentialUsageRepository,
} from './credential-usage-repository.js';
import {
  createOidcPayloadRepository,
  type OidcPayloadRepository,
} from './oidc-payload-repository.js';
import { createPrincipalRepository, type PrincipalRepository } from './principal-repository.js';
import { createRealmRepository, type RealmRepository } from './realm-repository.js';
import {
  createRevocationFeedRepository,
  type RevocationFeedRepository,
} from './revocation-feed-repository.js';
import {
  createServiceAccountCredentialRepository,
  type ServiceAccountCredentialRepository,
} from './service-account-credential-repository.js';
import {
  createServiceAccountRepository,
  type ServiceAccountRepository,
} from './service-account-repository.js';
import { createSigningKeyRepository, type SigningKeyRepository } from './signing-key-repository.js';
import { createUserFactorRepository, type UserFactorRepository } from './user-factor-repository.js';
import { createUserRepository, type UserRepository } from './user-repository.js';

/** Every Postgres repository of the token service, over one pool. */
export interface Repositories {
  realms: RealmRepository;
  signingKeys: SigningKeyRepository;
  principals: PrincipalRepository;
  /** The revocation change feed and its pruning. */
  revocationFeed: RevocationFeedRepository;
  serviceAccounts: ServiceAccountRepository;
  /** Keys, trusts, the secret's removal, disabling. */
  accountCredentials: ServiceAccountCredentialRepository;
  /** Cached per process: one instance serves every realm. */
  clientCredentials: ClientCredentialRepository;
  credentialUsage: CredentialUsageRepository;
  users: UserRepository;
  /** Second factors, recovery codes, the realm's factor policy. */
  userFactors: UserFactorRepository;
  oidcPayloads: OidcPayloadRepository;
}

export function createRepositories(db: Knex): Repositories {
  return {
    realms: createRealmRepository(db),
    signingKeys: createSigningKeyRepository(db),
    principals: createPrincipalRepository(db),
    revocationFeed: createRevocationFeedRepository(db),
    serviceAccounts: createServiceAccountRepository(db),
    accountCredentials: createServiceAccountCredentialRepository(db),
    clientCredentials: createClientCredentialRepository(db),
    credentialUsage: createCredentialUsageRepository(db),
    users: createUserRepository(db),
    userFactors: createUserFactorRepository(db),
    oidcPayloads: createOidcPayloadRepository(db),
  };
}
