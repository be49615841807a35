import type { ClientAuthFailureRepository } from '../data-access/client-auth-failure-repository.js';
import type { ClientCredentialRepository, ClientCredentialRow } from '../data-access/client-credential-repository.js';
import type { ClientSecretDigester } from './client-secrets.js';
import { TooManyFailedAuthentications } from './errors.js';
import type { UsageRecorder } from './usage-recorder.js';

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
  usage: UsageRecorder;
}

/**
 * Client authentication at the token endpoint (client_secret_basic and client_secret_post),
 * in the order oidc-provider reaches its steps:
 *  1. `admitSource`, before the endpoint reads the request: an address over its failure budget
 *     for all clients (unknown client ids count too) gets 429;
 *  2. `cachedCredential`, else `findCredential`: the client_id's credential;
 *  3. `verifySecret`: an address over its budget for this client gets 429 before the secret is
 *     compared; the digests are compared in constant time; a failure counts per (client, address),
 *     per address and per client. Above the per-client budget a wrong secret gets 429 instead of
 *     401, but the secret is still compared and a right one passes: an attacker elsewhere never
 *     locks the owner out. A success forgets this address's failures for the client;
 *  4. `recordUse`, once the token is issued.
 * An address no replica has seen fail within the window has every counter at zero: for it and
 * a cached credential no step returns a promise, so a grant's hot path waits on nothing here.
 */
export class ClientAuthentication {
  readonly #credentials: ClientCredentialRepository;
  readonly #failures: ClientAuthFailureRepository;
  readonly #secrets: ClientSecretDigester;
  readonly #usage: UsageRecorder;

  constructor({ credentials, failures, secrets, usage }: ClientAuthenticationDeps) {
    this.#credentials = credentials;
    this.#failures = failures;
    this.#secrets = secrets;
    this.#usage = usage;
  }

  /** Undefined when the address may go on at once; otherwise a promise that rejects with `TooManyFailedAuthentications` when it may not. */
  admitSource(source: ClientAuthSource): Promise<void> | undefined {
    return this.#failures.isClean(source.ip) ? undefined : this.#assertAddressAllowed(source);
  }

  /** The credential while its cached answer is fresh (`row` undefined: no such client), or undefined when `findCredential` must ask. */
  cachedCredential(realm: string, clientId: string): { readonly row: ClientCredential | undefined } | undefined {
    return this.#credentials.cached(realm, clientId);
  }

  findCredential(realm: string, clientId: string): Promise<ClientCredential | undefined> {
    return this.#credentials.find(realm, clientId);
  }

  /** Whether `presented` is the client's secret; rejects with `TooManyFailedAuthentications` when the budget says 429. */
  verifySecret(realm: string, clientId: string, storedDigest: string, presented: string, source: ClientAuthSource): boolean | Promise<boolean> {
    const { ip } = source;
    if (!this.#failures.isClean(ip)) return this.#verifyWatched(realm, clientId, storedDigest, presented, ip, source);
    return this.#secrets.matches(presented, storedDigest) || this.#countFailure(realm, clientId, ip, source);
  }

  /** invalid_client before any client was found: the address's failure. */
  recordUnknownClient(source: ClientAuthSource): void {
    this.#failures.recordUnknownClient(source.ip, source);
  }

  /** A token was issued to the client (last_used_at). */
  recordUse(clientId: string): void {
    this.#usage.record(clientId);
  }

  async #assertAddressAllowed(source: ClientAuthSource): Promise<void> {
    const wait = await this.#failures.ipBlockedFor(source.ip, source);
    if (wait > 0) throw new TooManyFailedAuthentications(wait);
  }

  async #verifyWatched(realm: string, clientId: string, storedDigest: string, presented: string, ip: string, source: ClientAuthSource): Promise<boolean> {
    const earlier = await this.#failures.clientIpFailures(realm, clientId, ip, source);
    if (earlier.blockedForSeconds > 0) throw new TooManyFailedAuthentications(earlier.blockedForSeconds);
    if (!this.#secrets.matches(presented, storedDigest)) return this.#countFailure(realm, clientId, ip, source);
    if (earlier.mayExist) this.#failures.forgetClientIp(realm, clientId, ip);
    return true;
  }

  async #countFailure(realm: string, clientId: string, ip: string, source: ClientAuthSource): Promise<false> {
    await this.#failures.recordFailure(realm, clientId, ip, source);
    const wait = await this.#failures.clientBlockedFor(realm, clientId, source);
    if (wait > 0) throw new TooManyFailedAuthentications(wait);
    return false;
  }
}
