/**
 * What every kind of change does besides itself, in one table: whether it revokes the tokens
 * issued before it (the principal's token version, and with it the revocation feed's row), what
 * it publishes after commit, which Shared Signals events it queues in its transaction, and what
 * it writes to the realm's security trail (`user_security_events`). The code that applies a
 * change reads its entry here: `changeAccount` a service account's, `applyPersonChange` every
 * person's (the user repository's changes and sign-out everywhere, an invitation's acceptance,
 * the factor repository's), the factor repository the factor policy, the credential hygiene
 * repository the credential policy and a leak's audit, `publishRotation` a key rotation's. A new
 * kind of change is a new `ChangeKind` and an entry, which the compiler asks for. The table is
 * rendered into docs/change-effects.md (change-effects-docs.ts), and a test holds the two equal,
 * fails when a kind is named nowhere it would be applied or an audited action is written past
 * the table, and checks a change of each service-account kind against Postgres.
 *
 * The changes span service accounts, people and realms, so the table is a wing of its own
 * (changes/) rather than one of theirs: each of those wings reads it.
 */
import type { AccountSignal, InitiatingEntity } from '../signal-outbox/index.js';

/** Every kind of change whose effects reach tokens, caches, receivers or the trail. */
export const CHANGE_KINDS = [
  'service-account.create',
  'service-account.secret-reset',
  'service-account.secret-add',
  'service-account.settings-change',
  'service-account.delete',
  'service-account.disable',
  'service-account.enable',
  'service-account.quota-change',
  'service-account.key-add',
  'service-account.key-remove',
  'service-account.trust-add',
  'service-account.trust-remove',
  'service-account.secret-remove',
  'service-account.leak-revoke',
  'service-account.leak-notify',
  'service-account.delegation-grant',
  'service-account.delegation-revoke',
  'realm.credential-policy',
  'person.role',
  'person.disable',
  'person.enable',
  'person.remove',
  'person.sign-out-everywhere',
  'person.invitation-accept',
  'person.factor-enrol',
  'person.factor-remove',
  'person.factors-reset',
  'person.recovery-codes-new',
  'realm.factor-policy',
  'realm.signing-key-rotate',
] as const;

export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** The kinds `changeAccount` applies (one locked service account). */
export type AccountChangeKind = Exclude<
  Extract<ChangeKind, `service-account.${string}`>,
  'service-account.create'
>;

/**
 * What happens to the tokens issued before the change:
 * - `none`: the token version stays, every token keeps working;
 * - `older-tokens`: the version is bumped, every token issued before is refused;
 * - `deleted`: bumped and the principal marked deleted, every token is refused for good;
 * - `older-tokens-of-each`: bumped for each principal the change reaches (named in `reaches`);
 * - `credential-tokens`: the version stays; exactly the tokens the removed credential obtained
 *   (their `cred` claim) are refused, and the account's other credentials' tokens keep working.
 * A bump writes the revocation feed's row (`revocation_changes`, by the trigger on `principals`);
 * a credential's revocation writes a row naming the credential (`revokeCredentials`).
 */
export type Revocation =
  | 'none'
  | 'older-tokens'
  | 'deleted'
  | 'older-tokens-of-each'
  | 'credential-tokens';

/**
 * What is published after commit:
 * - `revocation-entry`: the principal's `{tenant, sub, version, deleted}` on the revocation
 *   channel (every replica's credential cache drops the account; resource servers apply the version);
 * - `revocation-entry-of-each`: that, for each principal the change reaches;
 * - `key-change`: the realm's name on the key rotation channel (replicas reload the realm's keys);
 * - `none`.
 */
export type Publication = 'revocation-entry' | 'revocation-entry-of-each' | 'key-change' | 'none';

export interface ChangeEffects {
  /** The change, as the docs name it. */
  what: string;
  revokes: Revocation;
  /** Whom `older-tokens-of-each` and `revocation-entry-of-each` mean. */
  reaches?: string;
  /** Counts a credential change of the account (`credentials_revision`, which the credential cache compares). */
  countsCredentialChange: boolean;
  /** Deletes the person's realm sessions (no silent sign-in from a session begun before). */
  endsRealmSessions: boolean;
  publishes: Publication;
  /**
   * The Shared Signals events queued in the change's transaction, in order. A session
   * revocation's reason may hold `{parts}`, which the change fills with what it changed.
   */
  signals: readonly AccountSignal[];
  /** Who the events name as `initiating_entity`. */
  initiatedBy: InitiatingEntity;
  /** The action of the `user_security_events` row written in the change's transaction, or null. */
  audit: string | null;
}

const NOTHING = {
  revokes: 'none',
  countsCredentialChange: false,
  endsRealmSessions: false,
  publishes: 'none',
  signals: [],
  initiatedBy: 'admin',
  audit: null,
} as const satisfies Omit<ChangeEffects, 'what'>;

/** A change of one service account through `changeAccount`: counted, published, revoking or not. */
const ACCOUNT = {
  ...NOTHING,
  countsCredentialChange: true,
  publishes: 'revocation-entry',
} as const satisfies Omit<ChangeEffects, 'what'>;

/** A change of one person: the version is bumped and published. */
const PERSON = {
  ...NOTHING,
  revokes: 'older-tokens',
  publishes: 'revocation-entry',
} as const satisfies Omit<ChangeEffects, 'what'>;

/** The table. Encodes what the code did when it was written; a change of behaviour changes an entry. */
export const CHANGE_EFFECTS: Readonly<Record<ChangeKind, ChangeEffects>> = {
  'service-account.create': {
    ...NOTHING,
    what: 'A service account is created (with a secret)',
    signals: [{ type: 'credential-change', credential: 'secret', change: 'create' }],
  },
  'service-account.secret-reset': {
    ...ACCOUNT,
    what: "The account's secret is reset (a new one replaces it)",
    revokes: 'older-tokens',
    signals: [{ type: 'credential-change', credential: 'secret', change: 'update' }],
  },
  'service-account.secret-add': {
    ...ACCOUNT,
    what: 'A second secret is added beside the first (at most two live)',
    signals: [{ type: 'credential-change', credential: 'secret', change: 'create' }],
  },
  'service-account.settings-change': {
    ...ACCOUNT,
    what: "The account's role, grants, DPoP requirement or signal reception changes",
    revokes: 'older-tokens',
    signals: [
      {
        type: 'session-revoked',
        reason: "The service account's {parts} changed; its older tokens are revoked",
      },
    ],
  },
  'service-account.delete': {
    ...ACCOUNT,
    what: 'The account is deleted (credentials, grants and its own streams go)',
    revokes: 'deleted',
    // The account's row is gone: there is no revision to count.
    countsCredentialChange: false,
    signals: [
      { type: 'session-revoked', reason: 'The service account was deleted' },
      { type: 'account-purged' },
    ],
  },
  'service-account.disable': {
    ...ACCOUNT,
    what: 'The account is disabled',
    revokes: 'older-tokens',
    signals: [
      { type: 'account-disabled' },
      { type: 'session-revoked', reason: 'The service account was disabled' },
    ],
  },
  'service-account.enable': {
    ...ACCOUNT,
    what: 'The account is enabled again',
    signals: [{ type: 'account-enabled' }],
  },
  'service-account.quota-change': {
    ...ACCOUNT,
    what: "The account's own grant quota is set or cleared",
  },
  'service-account.key-add': {
    ...ACCOUNT,
    what: 'A public key is added',
    signals: [{ type: 'credential-change', credential: 'key', change: 'create' }],
  },
  'service-account.key-remove': {
    ...ACCOUNT,
    what: 'A public key is removed (exactly the tokens it obtained are revoked)',
    revokes: 'credential-tokens',
    signals: [{ type: 'credential-change', credential: 'key', change: 'delete' }],
  },
  'service-account.trust-add': {
    ...ACCOUNT,
    what: 'A trusted workload (federated issuer) is added',
    signals: [{ type: 'credential-change', credential: 'trust', change: 'create' }],
  },
  'service-account.trust-remove': {
    ...ACCOUNT,
    what: 'A trusted workload is removed (exactly the tokens it obtained are revoked)',
    revokes: 'credential-tokens',
    signals: [{ type: 'credential-change', credential: 'trust', change: 'delete' }],
  },
  'service-account.secret-remove': {
    ...ACCOUNT,
    what: 'A secret is removed (the account keeps another secret, keys or trusts; exactly the tokens it obtained are revoked)',
    revokes: 'credential-tokens',
    signals: [{ type: 'credential-change', credential: 'secret', change: 'delete' }],
  },
  'service-account.leak-revoke': {
    ...ACCOUNT,
    what: "A leak report names one of the account's secrets, and the realm revokes leaked secrets (that secret and its tokens only)",
    revokes: 'credential-tokens',
    signals: [
      {
        type: 'credential-compromise',
        credential: 'secret',
        reason: 'The credential was reported leaked and has been revoked',
      },
    ],
    initiatedBy: 'system',
    audit: 'service_account.secret_leak_revoked',
  },
  'service-account.leak-notify': {
    ...ACCOUNT,
    what: "A leak report names the account's secret, and the realm only notifies",
    audit: 'service_account.secret_leak_reported',
  },
  'service-account.delegation-grant': {
    ...ACCOUNT,
    what: 'The account may act for others at more audiences or with more scope (token exchange)',
  },
  'service-account.delegation-revoke': {
    ...ACCOUNT,
    what: 'The account may no longer act for others at an audience, or with less scope (its tokens, exchanged ones among them, are revoked)',
    revokes: 'older-tokens',
    signals: [
      {
        type: 'session-revoked',
        reason:
          "The service account's permission to act for others was narrowed; its older tokens are revoked",
      },
    ],
  },
  'realm.credential-policy': {
    ...NOTHING,
    what: "The realm's credential policy (secret age, leak response, default quota) changes",
    reaches: 'every service account of the realm',
    countsCredentialChange: true,
    publishes: 'revocation-entry-of-each',
  },
  'person.role': { ...PERSON, what: "A person's role changes (their realm grants go)" },
  'person.disable': {
    ...PERSON,
    what: 'A person is disabled (their realm grants go)',
    endsRealmSessions: true,
  },
  'person.enable': { ...PERSON, what: 'A person is enabled again (their realm grants go)' },
  'person.remove': {
    ...PERSON,
    what: 'A person is removed',
    revokes: 'deleted',
    endsRealmSessions: true,
  },
  'person.sign-out-everywhere': {
    ...PERSON,
    what: 'A person is signed out everywhere',
    endsRealmSessions: true,
  },
  'person.invitation-accept': {
    ...NOTHING,
    what: 'An invitation is accepted (the person is created)',
    audit: 'invitation.accept',
  },
  'person.factor-enrol': {
    ...PERSON,
    what: 'A person enrols a second factor (TOTP or a passkey)',
    audit: 'factor.enrol',
  },
  'person.factor-remove': {
    ...PERSON,
    what: "One of a person's second factors is removed (their factor generation moves)",
    endsRealmSessions: true,
    audit: 'factor.remove',
  },
  'person.factors-reset': {
    ...PERSON,
    what: "A person's second factors are all reset (their factor generation moves)",
    endsRealmSessions: true,
    audit: 'user.factors_reset',
  },
  'person.recovery-codes-new': {
    ...NOTHING,
    what: 'A person takes new recovery codes',
    audit: 'factor.recovery_codes_new',
  },
  'realm.factor-policy': {
    ...NOTHING,
    what: "The realm's require_admin_factor policy changes",
    revokes: 'older-tokens-of-each',
    reaches: 'each active Account Admin without a second factor, when the policy is turned on',
    publishes: 'revocation-entry-of-each',
    audit: 'tenant.policy_change',
  },
  'realm.signing-key-rotate': {
    ...NOTHING,
    what: "The realm's signing key rotates (retired keys stay published)",
    publishes: 'key-change',
  },
};

export function effectsOf(kind: ChangeKind): ChangeEffects {
  return CHANGE_EFFECTS[kind];
}

/** What `changeAccount` applies for one or more kinds of a single account change, in order. */
export interface AccountEffects {
  /** The token version is bumped (every older token refused). */
  revoke: boolean;
  /** Exactly the tokens of the credentials the change removed are refused (the version stays). */
  revokeCredentials: boolean;
  deleted: boolean;
  countsCredentialChange: boolean;
  signals: AccountSignal[];
  initiatedBy: InitiatingEntity;
}

/**
 * The effects of one account change made of `kinds` (a patch may reset the secret and change a
 * setting at once): revoking when any kind revokes, the signals of each kind in order, a
 * session revocation's `{parts}` filled with `parts` (and left out when there are none).
 */
export function accountEffectsOf(
  kinds: readonly AccountChangeKind[],
  parts: readonly string[] = [],
): AccountEffects {
  const entries = kinds.map(effectsOf);
  const signals = entries.flatMap((entry) =>
    entry.signals.flatMap((signal): AccountSignal[] => {
      if (signal.type !== 'session-revoked' || !signal.reason.includes('{parts}')) return [signal];
      if (parts.length === 0) return [];
      return [{ ...signal, reason: signal.reason.replace('{parts}', parts.join(', ')) }];
    }),
  );
  return {
    revoke: entries.some(
      (entry) => entry.revokes !== 'none' && entry.revokes !== 'credential-tokens',
    ),
    revokeCredentials: entries.some((entry) => entry.revokes === 'credential-tokens'),
    deleted: entries.some((entry) => entry.revokes === 'deleted'),
    countsCredentialChange: entries.every((entry) => entry.countsCredentialChange),
    signals,
    initiatedBy: entries.some((entry) => entry.initiatedBy === 'system') ? 'system' : 'admin',
  };
}
