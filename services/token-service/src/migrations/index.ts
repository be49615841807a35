import type { Migration } from '@plant/shared/db';
import { authSchema } from './0001-auth-schema.js';
import { oidcPayloadDigests } from './0002-oidc-payload-digests.js';
import { revocationSnapshotIndexes } from './0003-revocation-snapshot-indexes.js';
import { revocationChanges } from './0004-revocation-changes.js';
import { serviceAccountCredentials } from './0005-service-account-credentials.js';
import { dpopBoundAccessTokens } from './0006-dpop-bound-access-tokens.js';
import { serviceAccountNameKeys } from './0007-service-account-name-keys.js';
import { peopleAndSecondFactors } from './0008-people-and-second-factors.js';
import { credentialHygiene } from './0009-credential-hygiene.js';
import { sharedSignals } from './0010-shared-signals.js';
import { factorGeneration } from './0011-factor-generation.js';
import { invitationPages } from './0012-invitation-pages.js';
import { serviceAccountSecrets } from './0013-service-account-secrets.js';
import { tokenExchangeDelegations } from './0014-token-exchange-delegations.js';
import { resourceRevisions } from './0015-resource-revisions.js';
import { signInEvents } from './0016-sign-in-events.js';
import { credentialPolicyRevision } from './0017-credential-policy-revision.js';
import { factorPolicyRevision } from './0018-factor-policy-revision.js';

export { SCHEMA } from './schema.js';

/** Applied in order by `migrate.ts` and by the jest global setup. Files are numbered with four digits; the recorded names keep three, as '001-auth-schema' was first recorded. */
export const migrations: Migration[] = [
  authSchema,
  oidcPayloadDigests,
  revocationSnapshotIndexes,
  revocationChanges,
  serviceAccountCredentials,
  dpopBoundAccessTokens,
  serviceAccountNameKeys,
  peopleAndSecondFactors,
  credentialHygiene,
  sharedSignals,
  factorGeneration,
  invitationPages,
  serviceAccountSecrets,
  tokenExchangeDelegations,
  resourceRevisions,
  signInEvents,
  credentialPolicyRevision,
  factorPolicyRevision,
];
