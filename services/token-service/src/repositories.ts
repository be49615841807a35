import type { Knex } from '@plant/shared/db';
import {
  createClientCredentialRepository,
  type ClientCredentialRepository,
} from './credentials/client-credential-repository.js';
import {
  createCredentialHygieneRepository,
  type CredentialHygieneRepository,
} from './credentials/credential-hygiene-repository.js';
import {
  createCredentialUsageRepository,
  type CredentialUsageRepository,
} from './credentials/credential-usage-repository.js';
import {
  createInvitationRepository,
  type InvitationRepository,
} from './people/invitation-repository.js';
import {
  createOidcPayloadRepository,
  type OidcPayloadRepository,
} from './oidc/oidc-payload-repository.js';
import {
  createPrincipalRepository,
  type PrincipalRepository,
} from './service-accounts/principal-repository.js';
import { createRealmRepository, type RealmRepository } from './realms/realm-repository.js';
import {
  createRevocationFeedRepository,
  type RevocationFeedRepository,
} from './revocation/revocation-feed-repository.js';
import {
  createServiceAccountCredentialRepository,
  type ServiceAccountCredentialRepository,
} from './credentials/service-account-credential-repository.js';
import {
  createServiceAccountRepository,
  type ServiceAccountRepository,
} from './service-accounts/service-account-repository.js';
import {
  createSignalStreamRepository,
  type SignalStreamRepository,
} from './signals/signal-stream-repository.js';
import {
  createPeopleAuditRepository,
  type PeopleAuditRepository,
} from './people/people-audit-repository.js';
import {
  createSigningKeyRepository,
  type SigningKeyRepository,
} from './signing-keys/signing-key-repository.js';
import {
  createUserFactorRepository,
  type UserFactorRepository,
} from './second-factors/user-factor-repository.js';
import { createUserRepository, type UserRepository } from './people/user-repository.js';

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
    credentialHygiene: createCredentialHygieneRepository(db),
    users: createUserRepository(db),
    invitations: createInvitationRepository(db),
    peopleAudit: createPeopleAuditRepository(db),
    userFactors: createUserFactorRepository(db),
    oidcPayloads: createOidcPayloadRepository(db),
    signalStreams: createSignalStreamRepository(db),
  };
}
