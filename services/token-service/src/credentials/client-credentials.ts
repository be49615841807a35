import type { Grant, QuotaMode, ServiceAccountRole } from '@plant/shared/token-service-client';

/** A public key of the account (`private_key_jwt`), as the token endpoint checks assertions with it. */
export interface CredentialKey {
  id: string;
  alg: string;
  public_jwk: Record<string, unknown>;
}

/** One of the account's secrets (at most two live), as the token endpoint compares presented secrets with it. */
export interface CredentialSecret {
  id: string;
  /** HMAC-SHA-256(pepper, secret), hex. */
  digest: string;
  /** With the realm's maximum age, when it stops working (compared at every authentication, so a cached row never outlives it). */
  created_at: string;
  /** Its own expiry, if it was given one; null: none. */
  expires_at: string | null;
}

/** A trusted workload: tokens of `issuer` about `subject`, for `audience`. */
export interface CredentialTrust {
  id: string;
  issuer: string;
  subject: string;
  audience: string;
}

/** What the token endpoint needs to authenticate a client and mint its token, read together (a disabled account has none). */
export interface ClientCredentialRow {
  sub: string;
  realm: string;
  role: ServiceAccountRole;
  grants: Grant[];
  /** The account's secrets, oldest first; empty when it uses only keys or trusts. */
  secrets: CredentialSecret[];
  /** The realm's maximum secret age (per secret); null: none. A policy change counts as a change of every account, so the cached row follows it. */
  secret_max_age_days: number | null;
  /** The quota in force for the account: its own, else the realm's default. */
  quota_per_minute: number;
  quota_mode: QuotaMode;
  keys: CredentialKey[];
  trusts: CredentialTrust[];
  token_version: number;
  credentials_revision: number;
  /** Tokens only with a DPoP proof, bound to its key (RFC 9449). */
  dpop_bound_access_tokens: boolean;
  /** May ask for the Shared Signals scopes (`ssf.manage`, `ssf.read`). */
  receive_signals: boolean;
  /** Where it may act for others (token exchange): target audience and the most scope it may delegate there. */
  delegations: { audience: string; scope: string }[];
}

export interface ClientCredentialRepository {
  /**
   * The cached answer while it is fresh, without waiting: `{ row }` (row undefined for an id
   * known not to exist), or undefined when `find` must ask the database. The same row object
   * comes back until the account changes.
   */
  cached(
    realm: string,
    clientId: string,
  ): { readonly row: ClientCredentialRow | undefined } | undefined;
  /** The credential, from the cache or Postgres; a read that a change overtook is read again, never cached. */
  find(realm: string, clientId: string): Promise<ClientCredentialRow | undefined>;
  /**
   * As `find`, for a source that guesses: an id the realm's list of accounts (read at most once
   * a second per realm, so an account created within that second may be missed) does not name
   * is answered "no such client" without a query of its own.
   */
  findListed(realm: string, clientId: string): Promise<ClientCredentialRow | undefined>;
  /**
   * The accounts of the realm with a trust of exactly this workload (issuer, subject, one of
   * the audiences), at most two (two: it names no single account). Not cached: only a token
   * exchange with a workload's token as subject asks, and the answer's credential comes
   * from `find` (cached, following changes), whose trusts the token is then checked against: a
   * trust removed since the query is refused there.
   */
  trustingAccounts(
    realm: string,
    workload: { issuer: string; subject: string; audiences: readonly string[] },
  ): Promise<string[]>;
  /** False once `row` stopped being the account's credential here (changed, or no longer vouched for): no token may be issued with it. */
  isCurrent(row: ClientCredentialRow): boolean;
  /** The account changed or was created: its entry goes, a grant holding its row issues nothing, a read in flight is read again, the realm is listed again. */
  forget(realm: string, clientId: string): void;
  /** As `forget`, for every account (change events may have been missed). */
  forgetAll(): void;
  /**
   * Change events cannot be heard (the subscription is down): every account is forgotten, and
   * until `trust`, each lookup reads Postgres itself and nothing is cached.
   */
  distrust(): void;
  /** Change events are heard again (subscribed): forget everything once more, then cache anew. */
  trust(): void;
}

export interface CredentialCacheLimits {
  /**
   * How long an account's entry is fresh (10 min): a backstop only, since every change reaches
   * the cache as an event or, within seconds, through the change feed (follow-credential-changes.ts).
   */
  ttlMs: number;
  /** How long an unknown id is remembered (3 s). */
  unknownTtlMs: number;
  /** Unknown ids cached (10,000), oldest first out. */
  maxUnknown: number;
  /** Accounts cached (100,000): real accounts, so live data bounds them first; past this, long-expired entries go, then the oldest. */
  maxKnown: number;
}
