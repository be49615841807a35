/**
 * The boundaries between a service's wings, read from its import statements (checked by
 * import-rules.ts), and each service's allowed exceptions.
 *
 * A wing is a top-level folder of the service's src/ (migrations/ is not one); files directly in
 * src/ are the composition roots and may import anything. The rules:
 *
 * - entry: a file of wing A imports wing B through `../B/index.js` only, never B's other files;
 * - calls: each wing's index.ts opens with a header comment saying what the wing owns and a line
 *   `May call: <wing>, <wing>` (or `May call: nothing`); a wing imports only the wings it lists,
 *   and lists only wings that exist;
 * - cycles: no cycle between wings, except through an edge allowed below with its reason;
 * - layers: a repository (`*-repository.ts`) never imports a route or page (`*-route(s).ts`,
 *   `*-page(s).ts`, `*-form.ts`);
 * - oidc-provider: imported only by the `oidc` wing (decision 0013: oidc-provider beyond its
 *   documented configuration is used in one module, `oidc/oidc-provider-internals.ts`, and its
 *   patching calls appear nowhere else), the other importers listed below with their reasons;
 * - storage: the database and Redis clients only from repositories, the `platform` wing, the
 *   composition roots and migrations, the other importers listed below with their reasons.
 *
 * Adding a service is one entry in SERVICE_WING_RULES.
 */
import { join } from 'node:path';
import { repoRoot } from './repo-paths.js';

/** What a service's wings are allowed beyond the rules above, each with the reason it is allowed. */
export interface WingExceptions {
  /** Wing edges `from -> to` that close a cycle, each with why it is not cut yet. */
  cycleEdges?: Record<string, string>;
  /** Files (relative to src/) outside the oidc wing that import oidc-provider, and why. */
  oidcProviderImporters?: Record<string, string>;
  /** Files (relative to src/) outside repositories, platform and roots that import a storage client, and why. */
  storageImporters?: Record<string, string>;
}

/** Folders of src/ that are not wings. */
export const NOT_WINGS = ['migrations'];
/** The wing that owns oidc-provider. */
export const PROVIDER_WING = 'oidc';
/** The wing of platform plumbing, allowed the storage clients. */
export const PLATFORM_WING = 'platform';
/** The storage clients: the database (knex and pg, through @plant/shared/db) and Redis. */
export const STORAGE_MODULES = ['ioredis', 'knex', 'pg', '@plant/shared/db', '@plant/shared/redis'];
/** Names of a storage module that classify an error and open no connection: free to import. */
export const STORAGE_FREE_NAMES: Record<string, string[]> = {
  '@plant/shared/db': ['isDatabaseUnavailable'],
};
/** The oidc-provider patches decision 0013 keeps in its one module (code, not comments). */
export const PROVIDER_INTERNALS = [
  /\.Client\.prototype\b/,
  /\bclients?\.find\s*=/i,
  /\bcompareClientSecret\s*=/,
  /Object\.defineProperty\(\s*\w+\s*,\s*['"](issuer|href)['"]/,
];
export const PROVIDER_INTERNALS_MODULE = 'oidc/oidc-provider-internals.ts';

/** A repository, and what it must never import: a route or page. */
export const REPOSITORY = /-repository\.ts$/;
export const ROUTE_OR_PAGE = /-(routes?|pages?|form)\.ts$/;

const platformCycle =
  'the platform holds what every wing uses (errors, the identity context, route helpers); the ' +
  "identity context, the composition's shape every use case is handed, names the keys and the " +
  'publisher it holds by their types';

/** The services whose wings are checked, with their allowed exceptions. */
export const SERVICE_WING_RULES: Record<string, WingExceptions> = {
  'account-admin': {
    storageImporters: {
      'sessions/session-store.ts':
        'the portal sessions, their per-person index and step-up marks live in Redis: the store is the client',
    },
  },
  'token-service': {
    cycleEdges: {
      'platform -> credentials': platformCycle,
      'platform -> revocation': platformCycle,
      'platform -> signing-keys': platformCycle,
      'credentials -> client-auth':
        "a new key's algorithm and a trust's issuer URL are checked by client-auth's rules (algFits, urlProblem), which belong with the credentials they check",
      'service-accounts -> credentials':
        "an account's view shows its credentials, creating one generates its secret, and each change is published to the credential cache: an account and its credentials are one aggregate cut in two",
    },
    oidcProviderImporters: {
      'grants/grant-engine.ts':
        'builds the one Provider of every realm and its realm-bound ExternalSigningKey (decision 0005); the patching itself goes through oidc-provider-internals',
      'grants/service-account-clients.ts':
        "raises oidc-provider's documented error classes inside its token endpoint and reads Provider.ctx",
      'signing-keys/signing-key.ts':
        "a realm's key is an ExternalSigningKey, the class oidc-provider signs through",
      'sign-in/interaction-kit.ts': "types only: the interaction oidc-provider's API returns",
      'sign-in/sign-in-policy.ts':
        "the login checks are oidc-provider's documented interactionPolicy Check objects",
      'platform/errors.ts':
        "the catalogue's token-endpoint refusals subclass oidc-provider's documented error classes",
    },
    storageImporters: {
      'quotas/grant-quota-counter.ts': 'the Redis counter of grant quotas is the store itself',
      'revocation/revocation-publisher.ts': 'publishes revocation events on Redis (decision 0002)',
      'realms/realm-lock.ts': "the realm's row lock, taken inside the caller's transaction",
      'service-accounts/account-change.ts':
        "a change to an account and its signals in one transaction of the caller's",
      'signal-outbox/signal-outbox.ts':
        "the Shared Signals outbox, written in the caller's transaction",
      'signals/signal-notifications.ts': 'listens for outbox rows on a database connection',
    },
  },
};

export interface Violation {
  file: string;
  specifier: string;
  rule: 'entry' | 'calls' | 'cycles' | 'layers' | 'oidc-provider' | 'storage' | 'exceptions';
  message: string;
}

/** `file:line imports 'specifier': message [rule]`, one line. */
export const describeViolation = (v: Violation): string =>
  `${v.file} imports '${v.specifier}': ${v.message} [${v.rule}]`;

/** The src/ directory of a service, absolute. */
export const serviceSrc = (service: string): string => join(repoRoot, 'services', service, 'src');
