import type { ClientAuthFailureRepository } from './client-auth-failure-repository.js';
import {
  type ClientCredentialRepository,
  type ClientCredentialRow,
  type ClientSecretDigester,
  type CredentialSecret,
  secretDeadline,
  type UsageRecorder,
} from '../credentials/index.js';
import {
  type ClientAssertionVerifier,
  credentialClaimOf,
  type UsedCredential,
} from './client-assertions.js';
import { parseCompactJws } from './jws.js';
import {
  AssertionRejected,
  SecretExpired,
  TooManyFailedAuthentications,
} from '../platform/index.js';
import type { GrantQuotas } from '../quotas/index.js';

export type { UsedCredential } from './client-assertions.js';

/** A service account's credential as the token endpoint reads it: the same object until the account changes. */
export type ClientCredential = ClientCredentialRow;

/** Where an attempt comes from: its address, and the request a warning names (oidc-provider's request context is one). */
export interface ClientAuthSource {
  readonly ip: string;
  readonly req?: unknown;
}

export interface ClientAuthenticationDeps {
  credentials: ClientCredentialRepository;
  failures: ClientAuthFailureRepository;
  secrets: ClientSecretDigester;
  assertions: ClientAssertionVerifier;
  usage: UsageRecorder;
  quotas: GrantQuotas;
}

/**
 * Point lookups of uncached client ids one address may have in flight; more go through the
 * realm's list of accounts, so a burst of guessed ids costs a bounded number of queries.
 */
const LOOKUPS_PER_ADDRESS = 4;

/** Audiences of a workload token looked up as trusts: a token naming more is read by its first ones (a trust names one). */
const MAX_WORKLOAD_AUDIENCES = 8;

/**
 * Client authentication at the token endpoint: client_secret_basic and client_secret_post, and
 * client assertions (`private_key_jwt` with the account's keys, or a trusted workload's token;
 * `client-assertions.ts` checks them). Both spend the same failure budgets.
 * Failures slow down failing attempts; they never lock out the right secret of a client that
 * is not itself locked, whoever else shares its address (a NAT, a CI runner pool). In the
 * order oidc-provider reaches the steps:
 *  1. `cachedCredential`, else `findCredential`: the client_id's credential. An address over its
 *     failure budget for all clients (unknown client ids count too) learns that an id names no
 *     client as 429, not 401, and its uncached ids are checked against the realm's list of
 *     accounts, never with a query each; so is a burst of lookups from one address;
 *  2. `verifySecret`: an address over its budget for this client gets 429 before the secret is
 *     compared (the client is locked from there); the digests are compared in constant time; a
 *     failure counts per (client, address), per address and per client, and is answered 429
 *     instead of 401 when the client or the address is over its budget. Those two budgets never
 *     stop the comparison, so a right secret passes: an attacker elsewhere, or a broken job next
 *     door, never locks the owner out. A success forgets this address's failures for the client.
 *     The (client, address) budget is read before the comparison and written after it, so a
 *     parallel burst can be compared past it: claiming first would count the right secrets of
 *     parallel grants too and refuse them, and 256-bit secrets make the extra guesses worthless
 *     (here the throttle protects CPU; guessable passwords are the sign-in throttle's);
 *     `verifyAssertion` is the same step for an assertion: the lock before, the check, the
 *     count after (a check that could not be made, such as an issuer's keys unavailable, is
 *     not counted);
 *  2b. `#admit`, once the client authenticated: a secret past the tenant's maximum age is
 *     refused (`SecretExpired`, 401 saying so; not counted as a failure: it is the right
 *     secret), then the account's grant quota is counted (grant-quotas.ts; nothing is awaited
 *     while the quota is off). A wrong secret never reaches it, so no one spends another's quota;
 *  3. `isCurrent`, just before the token is sent: false once the credential changed (a reset
 *     that committed after the secret was compared), so the old secret issues nothing after the
 *     change's answer; `staleGrantVerdict` then tells a reset or a removed key (401) from a
 *     change of role or grants (retry) and a change that revoked nothing (the token goes out);
 *  4. `recordUse`, once the token is issued.
 * An address no replica has seen fail within the window has every counter at zero: for it and a
 * cached credential no step returns a promise, so a grant's hot path waits on nothing here.
 */
export class ClientAuthentication {
  readonly #credentials: ClientCredentialRepository;
  readonly #failures: ClientAuthFailureRepository;
  readonly #secrets: ClientSecretDigester;
  readonly #usage: UsageRecorder;
  readonly #assertions: ClientAssertionVerifier;
  readonly #quotas: GrantQuotas;
  /** Point lookups in flight per address; an address leaves at zero, so the bound is the lookups in flight. */
  readonly #lookups = new Map<string, number>();
  /** What authenticated each request's assertion, by its source (the request): gone with the request. */
  readonly #verdicts = new WeakMap<object, UsedCredential>();

  constructor({
    credentials,
    failures,
    secrets,
    assertions,
    usage,
    quotas,
  }: ClientAuthenticationDeps) {
    this.#quotas = quotas;
    this.#credentials = credentials;
    this.#failures = failures;
    this.#secrets = secrets;
    this.#assertions = assertions;
    this.#usage = usage;
  }

  /**
   * The credential without waiting when the cache settles it for this source: `{ row }` (row
   * undefined: no such client, a plain 401), or undefined when `findCredential` must be awaited.
   */
  cachedCredential(
    realm: string,
    clientId: string,
    source: ClientAuthSource,
  ): { readonly row: ClientCredential | undefined } | undefined {
    const hit = this.#credentials.cached(realm, clientId);
    // "No such client" is a 401 only for an address under its budget; one that failed recently is asked about.
    return hit === undefined || hit.row !== undefined || this.#failures.isClean(source.ip)
      ? hit
      : undefined;
  }

  /** The credential, or undefined (401); rejects with `TooManyFailedAuthentications` when the address is over its budget and the id names no client. */
  async findCredential(
    realm: string,
    clientId: string,
    source: ClientAuthSource,
  ): Promise<ClientCredential | undefined> {
    const { ip } = source;
    const wait = this.#failures.isClean(ip) ? 0 : await this.#failures.ipBlockedFor(ip, source);
    const credential = await this.#lookUp(realm, clientId, ip, wait > 0);
    if (credential === undefined && wait > 0) throw new TooManyFailedAuthentications(wait);
    return credential;
  }

  /**
   * Whether `presented` is one of the client's secrets; which one is remembered for the request
   * (the token's `cred` claim, its last use). Throws or rejects with
   * `TooManyFailedAuthentications` when the budget says 429, `SecretExpired` for a right secret
   * past its own expiry or the realm's maximum age, `GrantQuotaExceeded` for the right secret
   * of an account over its enforced quota.
   */
  verifySecret(
    credential: ClientCredential,
    presented: string,
    source: ClientAuthSource,
  ): boolean | Promise<boolean> {
    const { realm, sub: clientId } = credential;
    const { ip } = source;
    if (!this.#failures.isClean(ip))
      return this.#verifyWatched(realm, clientId, credential, presented, ip, source).then(
        (matched) => matched !== undefined && this.#admit(credential, matched, source),
      );
    const matched = this.#matchSecret(credential, presented);
    if (matched === undefined) return this.#countFailure(realm, clientId, ip, source);
    return this.#admit(credential, matched, source);
  }

  /**
   * The secret `presented` is, or undefined. Each of the (at most two) digests is compared in
   * constant time, all of them whichever matches, so the time tells nothing of which one did.
   */
  #matchSecret(credential: ClientCredential, presented: string): CredentialSecret | undefined {
    let matched: CredentialSecret | undefined;
    for (const secret of credential.secrets)
      if (this.#secrets.matches(presented, secret.digest)) matched ??= secret;
    return matched;
  }

  /** What an authenticated secret must still pass: its own expiry and age, then the account's quota. */
  #admit(
    credential: ClientCredential,
    secret: CredentialSecret,
    source: ClientAuthSource,
  ): true | Promise<true> {
    const expiresAt = secretDeadline(
      secret.created_at,
      secret.expires_at,
      credential.secret_max_age_days,
    );
    if (expiresAt !== null && Date.now() >= expiresAt.getTime()) throw new SecretExpired(expiresAt);
    if (typeof source === 'object') this.#verdicts.set(source, { kind: 'secret', id: secret.id });
    const quota = this.#quotas.check(credential);
    return quota === undefined ? true : quota.then(() => true);
  }

  /**
   * Whether the assertion authenticates the client; what did (a key, a trust) is remembered for
   * the request. Rejects with `AssertionRejected` (401), `TooManyFailedAuthentications` (429)
   * or `AssertionCheckUnavailable` (the jti could not be recorded: 503).
   */
  async verifyAssertion(
    credential: ClientCredential,
    assertion: string,
    audiences: ReadonlySet<string>,
    source: ClientAuthSource & object,
  ): Promise<UsedCredential> {
    const { realm, sub } = credential;
    const { ip } = source;
    const earlier = this.#failures.isClean(ip)
      ? undefined
      : await this.#failures.clientIpFailures(realm, sub, ip, source);
    if (earlier !== undefined && earlier.blockedForSeconds > 0)
      throw new TooManyFailedAuthentications(earlier.blockedForSeconds);
    let used: UsedCredential;
    try {
      used = await this.#assertions.verify(credential, assertion, audiences);
    } catch (err) {
      if (err instanceof AssertionRejected && err.counted)
        await this.#countFailure(realm, sub, ip, source);
      throw err;
    }
    if (earlier?.mayExist) this.#failures.forgetClientIp(realm, sub, ip);
    await this.#quotas.check(credential);
    this.#verdicts.set(source, used);
    return used;
  }

  /**
   * The account a trusted workload's platform token stands for, as a token exchange's subject
   * token (RFC 8693 §2.1, type `jwt`): the one account of the realm with a trust of exactly
   * this workload (`iss`, `sub`, an `aud`), enabled and not deleted, and the token verified as
   * that trust's client assertion would be (issuer keys, times). Cheap checks (shape, a trust
   * at all) come before the one query and the signature. Rejects with `AssertionRejected`;
   * a failure is not counted against anyone's budget: the client presenting it authenticated.
   */
  async workloadSubject(
    realm: string,
    token: string,
  ): Promise<{ credential: ClientCredential; exp: number }> {
    const jws = parseCompactJws(token);
    if (jws === undefined) throw new AssertionRejected('the token is not a compact JWS', false);
    const { iss, sub, aud } = jws.payload;
    const audiences = (Array.isArray(aud) ? aud : [aud])
      .filter((a): a is string => typeof a === 'string')
      .slice(0, MAX_WORKLOAD_AUDIENCES);
    if (typeof iss !== 'string' || typeof sub !== 'string' || audiences.length === 0)
      throw new AssertionRejected('iss, sub and aud are required', false);
    const accounts = await this.#credentials.trustingAccounts(realm, {
      issuer: iss,
      subject: sub,
      audiences,
    });
    if (accounts.length !== 1)
      throw new AssertionRejected(
        accounts.length === 0
          ? 'no account of the realm trusts this workload'
          : 'more than one account trusts this workload',
        false,
      );
    const credential = await this.#credentials.find(realm, accounts[0]!);
    if (credential === undefined)
      throw new AssertionRejected('the trusting account is disabled or gone', false);
    const exp = await this.#assertions.verifyWorkloadSubject(credential, jws);
    return { credential, exp };
  }

  /** What authenticated this request's assertion, when one did (oidc-provider may look its client up again). */
  verifiedAssertion(source: object): UsedCredential | undefined {
    const used = this.#verdicts.get(source);
    return used?.kind === 'secret' ? undefined : used;
  }

  /** The `cred` claim of the token this request obtains: the credential that authenticated it (decision 0035). */
  credentialClaim(source: object): string | undefined {
    const used = this.#verdicts.get(source);
    return used === undefined ? undefined : credentialClaimOf(used);
  }

  /** False when the credential changed since it was read: the grant holding it must not hand out its token. */
  isCurrent(credential: ClientCredential): boolean {
    return this.#credentials.isCurrent(credential);
  }

  /**
   * For a grant whose credential is no longer current, what to do with its token: `issue` when
   * what authenticated this request still does (the same secret; the key or trust still there)
   * and the version did not move (an added key or trust, nothing revoked); `retry` when it still
   * authenticates but the claims changed (role, grants); `refuse` for a reset, a removed key or
   * trust, a disabled or deleted account.
   */
  async staleGrantVerdict(
    credential: ClientCredential,
    source: object,
  ): Promise<'issue' | 'retry' | 'refuse'> {
    const now = await this.#credentials.find(credential.realm, credential.sub);
    if (now === undefined) return 'refuse';
    const used = this.#verdicts.get(source);
    if (used === undefined) return 'refuse';
    const held = { secret: now.secrets, key: now.keys, trust: now.trusts }[used.kind];
    if (!held.some((c: { id: string }) => c.id === used.id)) return 'refuse';
    return now.token_version === credential.token_version ? 'issue' : 'retry';
  }

  /** invalid_client before any client was found: the address's failure. */
  recordUnknownClient(source: ClientAuthSource): void {
    this.#failures.recordUnknownClient(source.ip, source);
  }

  /** A token was issued to the client (last_used_at of the account and of the credential this request used). */
  recordUse(clientId: string, source: object | undefined): void {
    const used = source && this.#verdicts.get(source);
    if (used !== undefined) this.#usage.record({ sub: clientId, kind: used.kind, id: used.id });
  }

  async #lookUp(
    realm: string,
    clientId: string,
    ip: string,
    overBudget: boolean,
  ): Promise<ClientCredential | undefined> {
    const inFlight = this.#lookups.get(ip) ?? 0;
    if (overBudget || inFlight >= LOOKUPS_PER_ADDRESS)
      return this.#credentials.findListed(realm, clientId);
    this.#lookups.set(ip, inFlight + 1);
    try {
      return await this.#credentials.find(realm, clientId);
    } finally {
      const left = (this.#lookups.get(ip) ?? 1) - 1;
      if (left === 0) this.#lookups.delete(ip);
      else this.#lookups.set(ip, left);
    }
  }

  async #verifyWatched(
    realm: string,
    clientId: string,
    credential: ClientCredential,
    presented: string,
    ip: string,
    source: ClientAuthSource,
  ): Promise<CredentialSecret | undefined> {
    const earlier = await this.#failures.clientIpFailures(realm, clientId, ip, source);
    if (earlier.blockedForSeconds > 0)
      throw new TooManyFailedAuthentications(earlier.blockedForSeconds);
    const matched = this.#matchSecret(credential, presented);
    if (matched === undefined) {
      await this.#countFailure(realm, clientId, ip, source);
      return undefined;
    }
    if (earlier.mayExist) this.#failures.forgetClientIp(realm, clientId, ip);
    return matched;
  }

  async #countFailure(
    realm: string,
    clientId: string,
    ip: string,
    source: ClientAuthSource,
  ): Promise<false> {
    // The budgets as they were before this failure (asked first, on the same connection): the failure that spends one is still a 401.
    const [forClient, forAddress] = await Promise.all([
      this.#failures.clientBlockedFor(realm, clientId, source),
      this.#failures.ipBlockedFor(ip, source),
      this.#failures.recordFailure(realm, clientId, ip, source),
    ]);
    const wait = Math.max(forClient, forAddress);
    if (wait > 0) throw new TooManyFailedAuthentications(wait);
    return false;
  }
}
