import type { KeyObject } from 'node:crypto';
import type { Logger } from '@plant/shared/logging';
import { Counter, type Registry } from 'prom-client';
import type { AssertionReplayRepository } from './assertion-replay-repository.js';
import {
  type ClientCredentialRow,
  type CredentialKey,
  type CredentialTrust,
  credentialName,
  keyObjectOf,
} from '../credentials/index.js';
import type { FederatedIssuerKeys } from './federated-issuer-keys.js';
import {
  AssertionCheckUnavailable,
  AssertionRejected,
  IssuerKeysUnavailable,
} from '../platform/index.js';
import {
  ASYMMETRIC_ALGS,
  firstVerifying,
  MAX_SIGNATURE_CHECKS,
  parseCompactJws,
  type CompactJws,
} from './jws.js';

/** The credential that authenticated a grant. */
export type UsedCredential = {
  readonly kind: 'secret' | 'key' | 'trust';
  readonly id: string;
};

/** The `cred` claim of a token `used` obtained (decision 0035): `secret:<id>`, `key:<id>`, `trust:<id>`. */
export function credentialClaimOf(used: UsedCredential): string {
  return credentialName(used.kind, used.id);
}

/** `private_key_jwt`: an assertion may be valid for at most this long from now (RFC 7523 leaves it to us). */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;
/** Clock difference tolerated on `exp`, `nbf` and `iat` (the workload's platform keeps its own clock). */
export const ASSERTION_CLOCK_SKEW_SECONDS = 10;
const MAX_JTI_LENGTH = 256;
const ALGS = new Set(ASYMMETRIC_ALGS);
/** Stored keys refused by the key rule that were reported; past this many the set starts over (a key is then reported again). */
const MAX_REPORTED_KEYS = 10_000;

export interface AssertionVerifierDeps {
  replay: AssertionReplayRepository;
  issuerKeys: FederatedIssuerKeys;
  logger: Logger;
  /** Where `client_assertion_signature_checks_total` is registered. */
  metrics: Registry;
}

function audiencesOf(payload: Record<string, unknown>): string[] {
  const { aud } = payload;
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
}

/** `exp` in the future (within the skew), `nbf` and `iat` not in the future; `maxLifetime` caps `exp` (keys only). */
function assertTimes(payload: Record<string, unknown>, now: number, maxLifetime?: number): number {
  const { exp, nbf, iat } = payload;
  if (typeof exp !== 'number' || !Number.isFinite(exp))
    throw new AssertionRejected('exp is missing');
  if (exp <= now - ASSERTION_CLOCK_SKEW_SECONDS)
    throw new AssertionRejected('the assertion has expired');
  if (maxLifetime !== undefined && exp > now + maxLifetime + ASSERTION_CLOCK_SKEW_SECONDS)
    throw new AssertionRejected(`exp is more than ${maxLifetime} s ahead`);
  for (const [name, value] of [
    ['nbf', nbf],
    ['iat', iat],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'number' || value > now + ASSERTION_CLOCK_SKEW_SECONDS)
      throw new AssertionRejected(`${name} is in the future`);
  }
  return exp;
}

/**
 * A client assertion (`client_assertion_type=...:jwt-bearer`), in one of two forms:
 *  - `private_key_jwt` (RFC 7523 §3): `iss` = `sub` = the client_id, signed by one of the
 *    account's keys (the header's `kid` picks it; without one the newest keys of the
 *    algorithm are tried, `MAX_SIGNATURE_CHECKS` at most: a client with more keys names
 *    them), `aud` the realm's issuer or token endpoint, `exp` at most five
 *    minutes ahead, and a `jti` accepted once within its lifetime across replicas (claimed in
 *    Redis; fail closed);
 *  - a trusted workload's own platform token (federation): `iss` one of the account's trusted
 *    issuers, `sub` and `aud` that trust's subject and audience, signed by a key of the
 *    issuer's JWKS (the `kid`'s, or `MAX_SIGNATURE_CHECKS` of its keys at most). Platform
 *    tokens are reused until their platform renews them, so no jti rule applies; their own
 *    `exp` bounds them.
 * Cheap checks (shape, algorithm, claims) come before the signature, and the signature before
 * the jti is claimed, so a forged assertion can neither cost a key lookup nor burn a jti.
 */
export class ClientAssertionVerifier {
  /** Signature checks made, by the credential kind checked against: what the per-assertion bound is measured by. */
  readonly #checks: Record<'key' | 'trust', { inc(n: number): void }>;
  /** Stored keys already reported as refused by the key rule (realm, account, key id): one warning each, not one per grant. */
  readonly #reported = new Set<string>();

  constructor(private readonly deps: AssertionVerifierDeps) {
    const counter = new Counter({
      name: 'client_assertion_signature_checks_total',
      help: 'Signature checks made for client assertions, by credential kind (key, trust)',
      labelNames: ['credential'],
      registers: [deps.metrics],
    });
    this.#checks = { key: counter.labels('key'), trust: counter.labels('trust') };
    // Both series from the start (at 0), so a scrape reads a rate, never a series that appears later.
    this.#checks.key.inc(0);
    this.#checks.trust.inc(0);
  }

  async verify(
    credential: ClientCredentialRow,
    assertion: string,
    audiences: ReadonlySet<string>,
  ): Promise<UsedCredential> {
    const jws = parseCompactJws(assertion);
    if (jws === undefined) throw new AssertionRejected('the assertion is not a compact JWS');
    const { alg } = jws.header;
    if (typeof alg !== 'string' || !ALGS.has(alg) || jws.header.crit !== undefined)
      throw new AssertionRejected('unsupported alg or crit header');
    const now = Math.floor(Date.now() / 1000);
    const clientId = credential.sub;
    if (jws.payload.iss === clientId)
      return this.#verifyKeyAssertion(credential, jws, alg, audiences, now);
    return this.#verifyWorkloadToken(credential, jws, alg, now);
  }

  /**
   * A trusted workload's platform token presented as a token exchange's subject token (not as
   * the client's own credential): only the trust form is accepted, so an account's
   * `private_key_jwt` assertion can never stand for it here (nor burn its jti). Resolves to the
   * token's `exp`.
   */
  async verifyWorkloadSubject(credential: ClientCredentialRow, jws: CompactJws): Promise<number> {
    const { alg } = jws.header;
    if (typeof alg !== 'string' || !ALGS.has(alg) || jws.header.crit !== undefined)
      throw new AssertionRejected('unsupported alg or crit header');
    await this.#verifyWorkloadToken(credential, jws, alg, Math.floor(Date.now() / 1000));
    return jws.payload.exp as number;
  }

  async #verifyKeyAssertion(
    credential: ClientCredentialRow,
    jws: CompactJws,
    alg: string,
    audiences: ReadonlySet<string>,
    now: number,
  ): Promise<UsedCredential> {
    const { payload, header } = jws;
    if (payload.sub !== credential.sub) throw new AssertionRejected('sub must be the client_id');
    if (!audiencesOf(payload).some((aud) => audiences.has(aud)))
      throw new AssertionRejected("aud must be the realm's issuer or token endpoint");
    const exp = assertTimes(payload, now, MAX_ASSERTION_LIFETIME_SECONDS);
    const { jti } = payload;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH)
      throw new AssertionRejected('jti is missing');
    // Without a kid, newest first: a client that rotated to a new key finds it among the few tried.
    const candidates =
      header.kid === undefined
        ? credential.keys.toReversed()
        : credential.keys.filter((k) => k.id === header.kid);
    const { key, checks } = await firstVerifying(jws, alg, candidates, (row) =>
      this.#usableKey(credential, row),
    );
    this.#checks.key.inc(checks);
    if (key === undefined)
      throw new AssertionRejected(
        candidates.length === 0
          ? 'no key of the account has this kid'
          : checks === MAX_SIGNATURE_CHECKS
            ? `the signature does not verify with the ${checks} newest keys tried`
            : 'the signature does not verify',
      );
    let first: boolean;
    try {
      first = await this.deps.replay.claim(
        credential.realm,
        credential.sub,
        jti,
        exp - now + ASSERTION_CLOCK_SKEW_SECONDS,
      );
    } catch (err) {
      throw new AssertionCheckUnavailable(
        `the jti could not be recorded: ${(err as Error).message}`,
      );
    }
    if (!first) throw new AssertionRejected('the jti was used before');
    return { kind: 'key', id: key.id };
  }

  async #verifyWorkloadToken(
    credential: ClientCredentialRow,
    jws: CompactJws,
    alg: string,
    now: number,
  ): Promise<UsedCredential> {
    const { payload, header } = jws;
    const fromIssuer = credential.trusts.filter((t) => t.issuer === payload.iss);
    if (fromIssuer.length === 0)
      throw new AssertionRejected(
        'iss is neither the client_id nor a trusted issuer of the account',
      );
    const audiences = audiencesOf(payload);
    const trust: CredentialTrust | undefined = fromIssuer.find(
      (t) => t.subject === payload.sub && audiences.includes(t.audience),
    );
    if (trust === undefined)
      throw new AssertionRejected("no trust of the account matches the token's sub and aud");
    assertTimes(payload, now);
    let keys: KeyObject[];
    try {
      keys = await this.deps.issuerKeys.keysFor(
        trust.issuer,
        typeof header.kid === 'string' ? header.kid : undefined,
      );
    } catch (err) {
      if (err instanceof IssuerKeysUnavailable)
        throw new AssertionRejected(
          `the trusted issuer's keys are unavailable: ${err.message}`,
          false,
        );
      throw err;
    }
    const { key, checks } = await firstVerifying(jws, alg, keys, (k) => k);
    this.#checks.trust.inc(checks);
    if (key === undefined)
      throw new AssertionRejected("the signature does not verify with the issuer's keys");
    return { kind: 'trust', id: trust.id };
  }

  /** The key object of a stored key, or undefined for one the key rule refuses (stored before the rule): reported once, never tried. */
  #usableKey(credential: ClientCredentialRow, row: CredentialKey): KeyObject | undefined {
    const stored = keyObjectOf(row);
    if (stored.problem !== undefined) {
      const id = `${credential.realm}/${credential.sub}/${row.id}`;
      if (!this.#reported.has(id)) {
        if (this.#reported.size >= MAX_REPORTED_KEYS) this.#reported.clear();
        this.#reported.add(id);
        this.deps.logger.warn(
          {
            realm: credential.realm,
            clientId: credential.sub,
            keyId: row.id,
            reason: stored.problem,
          },
          'stored key refused by the key rule is never tried; the account should replace it',
        );
      }
    }
    return stored.object;
  }
}
