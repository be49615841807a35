import type { Knex } from '@plant/shared/db';
import {
  createClientCredentialRepository,
  type ClientCredentialRepository,
  createCredentialHygieneRepository,
  type CredentialHygieneRepository,
  createCredentialUsageRepository,
  type CredentialUsageRepository,
  createServiceAccountCredentialRepository,
  type ServiceAccountCredentialRepository,
} from './credentials/index.js';
import {
  createInvitationRepository,
  type InvitationRepository,
  createUserRepository,
  type UserRepository,
} from './people/index.js';
import { createPeopleAuditRepository, type PeopleAuditRepository } from './people-audit/index.js';
import { createOidcPayloadRepository, type OidcPayloadRepository } from './oidc/index.js';
import {
  createPrincipalRepository,
  type PrincipalRepository,
  createServiceAccountRepository,
  type ServiceAccountRepository,
} from './service-accounts/index.js';
import { createRealmRepository, type RealmRepository } from './realms/index.js';
import {
  createRealmCreationRepository,
  type RealmCreationRepository,
} from './realm-creation/index.js';
import {
  createRevocationFeedRepository,
  type RevocationFeedRepository,
} from './revocation/index.js';
import { createSignalStreamRepository, type SignalStreamRepository } from './signals/index.js';
import { createSigningKeyRepository, type SigningKeyRepository } from './signing-keys/index.js';
import { createUserFactorRepository, type UserFactorRepository } from './second-factors/index.js';
import { createDelegationRepository, type DelegationRepository } from './token-exchange/index.js';

/** Every Postgres repository of the token service, over one pool. */
export interface Repositories {
  realms: RealmRepository;
  /** A realm made with its first key and person. */
  realmCreation: RealmCreationRepository;
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
  /** The tenant's credential policy, quota overrides, leak reports and their security events. */
  credentialHygiene: CredentialHygieneRepository;
  users: UserRepository;
  invitations: InvitationRepository;
  /** The realm-side trail of what happened to people (account-admin merges it into its audit). */
  peopleAudit: PeopleAuditRepository;
  /** Second factors, recovery codes, the realm's factor policy. */
  userFactors: UserFactorRepository;
  oidcPayloads: OidcPayloadRepository;
  /** Shared Signals streams, their subjects and queues (the outbox is signal-outbox.ts). */
  signalStreams: SignalStreamRepository;
  /** Who may act for others at which audience (token exchange). */
  delegations: DelegationRepository;
}

export function createRepositories(db: Knex): Repositories {
  return {
    realms: createRealmRepository(db),
    realmCreation: createRealmCreationRepository(db),
    signingKeys: createSigningKeyRepository(db),
    principals: createPrincipalRepository(db),
    revocationFeed: createRevocationFeedRepository(db),
    serviceAccounts: createServiceAccountRepository(db),
    accountCredentials: createServiceAccountCredentialRepository(db),
    clientCredentials: createClientCredentialRepository(db),
    credentialUsage: createCredentialUsageRepository(db),
    credentialHygiene: createCredentialHygieneRepository(db),
    users: createUserRepository(db),
    invitations: createInvitationRepository(db),
    peopleAudit: createPeopleAuditRepository(db),
    userFactors: createUserFactorRepository(db),
    oidcPayloads: createOidcPayloadRepository(db),
    signalStreams: createSignalStreamRepository(db),
    delegations: createDelegationRepository(db),
  };
}
