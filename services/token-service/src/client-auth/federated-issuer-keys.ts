import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { verificationKeyProblem } from '@plant/shared/security';
import { fetchIssuerJson, urlProblem, type IssuerFetchPolicy } from './issuer-fetch.js';
import { IssuerFetchFailed, IssuerKeysUnavailable } from '../platform/index.js';

export interface IssuerKeyLimits {
  /** How long fetched keys are used before they are fetched again (10 min). */
  ttlMs: number;
  /** An unknown kid, or a failed fetch, fetches again at most this often per issuer (30 s). */
  refetchMinMs: number;
  /** Issuers cached (1000): only issuers a trust names are ever fetched, so live trusts bound them first. */
  maxIssuers: number;
}

/** A trusted issuer's signing keys, fetched through its discovery document. */
export interface FederatedIssuerKeys {
  /** The keys with `kid` (every key when the token names none); rejects with `IssuerKeysUnavailable`. */
  keysFor(issuer: string, kid: string | undefined): Promise<KeyObject[]>;
}

const DISCOVERY_MAX_BYTES = 64 * 1024;
/**
 * Bounds of an issuer's JWKS. Platforms publish a few keys (Kubernetes one or two, CI providers
 * and cloud identity platforms under ten, with their certificates about 2 KiB each); a document
 * over either bound makes the issuer's keys unavailable rather than half-read. Parsing is paid
 * once per fetch, at most once per `refetchMinMs`; what a token costs is bounded apart
 * (`MAX_SIGNATURE_CHECKS`).
 */
export const JWKS_MAX_BYTES = 32 * 1024;
export const MAX_JWKS_KEYS = 16;
/** Keys whose refetch fails keep serving up to this many lifetimes after they were fetched. */
const STALE_LIFETIMES = 6;
const DEFAULT_LIMITS: IssuerKeyLimits = {
  ttlMs: 10 * 60_000,
  refetchMinMs: 30_000,
  maxIssuers: 1000,
};

interface IssuerKey {
  kid: string | undefined;
  key: KeyObject;
}

interface Entry {
  keys: IssuerKey[] | undefined;
  fetchedAt: number;
  attemptedAt: number;
  lastError: string | undefined;
  pending: Promise<void> | undefined;
}

/**
 * The signing keys of a JWKS that we can use: `use` sig or absent, and passing the key rule
 * (`verificationKeyProblem`: RSA 2048-4096 bits with a small odd e, EC P-256, Ed25519); the rest
 * ignored, as keys for others (encryption, another curve) are in real documents.
 */
function usableKeys(jwks: unknown): IssuerKey[] {
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new IssuerKeysUnavailable('JWKS has no keys array');
  if (keys.length > MAX_JWKS_KEYS)
    throw new IssuerKeysUnavailable(
      `JWKS has ${keys.length} keys, over the ${MAX_JWKS_KEYS} accepted`,
    );
  return keys.flatMap((jwk: Record<string, unknown>) => {
    if (
      typeof jwk !== 'object' ||
      jwk === null ||
      (jwk.use !== undefined && jwk.use !== 'sig') ||
      'd' in jwk ||
      'k' in jwk
    )
      return [];
    try {
      const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
      if (verificationKeyProblem(key) !== undefined) return [];
      return [{ kid: typeof jwk.kid === 'string' ? jwk.kid : undefined, key }];
    } catch {
      return [];
    }
  });
}

/**
 * Keys of trusted issuers (federation), cached per issuer: fetched through
 * `{issuer}/.well-known/openid-configuration` (whose `issuer` must be the trusted one) and its
 * `jwks_uri`, both under the fetch policy (https in production, public addresses unless
 * allowed, size and time limits). Used for `ttlMs`; a token naming an unknown `kid` fetches
 * again, at most once per `refetchMinMs` per issuer (a flood of made-up kids costs one fetch);
 * a failed fetch is not retried sooner either, and keys fetched before keep serving until
 * replaced. Concurrent callers share one fetch. Bound: `maxIssuers`, oldest first out.
 */
class CachedIssuerKeys implements FederatedIssuerKeys {
  /** Bound: the issuers trusts name and tokens were checked against, `maxIssuers` at most. */
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly policy: IssuerFetchPolicy,
    private readonly limits: IssuerKeyLimits,
    private readonly onFailure: (issuer: string, reason: string) => void,
  ) {}

  async keysFor(issuer: string, kid: string | undefined): Promise<KeyObject[]> {
    const entry = this.#entryOf(issuer);
    const now = Date.now();
    const matching = () =>
      (entry.keys ?? []).filter((k) => kid === undefined || k.kid === kid).map((k) => k.key);
    const stale = entry.keys === undefined || now - entry.fetchedAt >= this.limits.ttlMs;
    const mayFetch = now - entry.attemptedAt >= this.limits.refetchMinMs;
    if ((stale || matching().length === 0) && (mayFetch || entry.pending !== undefined)) {
      entry.pending ??= this.#fetch(issuer, entry).finally(() => (entry.pending = undefined));
      await entry.pending;
    }
    if (entry.keys === undefined)
      throw new IssuerKeysUnavailable(entry.lastError ?? 'keys not fetched yet');
    return matching();
  }

  #entryOf(issuer: string): Entry {
    let entry = this.#entries.get(issuer);
    if (entry === undefined) {
      if (this.#entries.size >= this.limits.maxIssuers)
        this.#entries.delete(this.#entries.keys().next().value!);
      entry = {
        keys: undefined,
        fetchedAt: 0,
        attemptedAt: -Infinity,
        lastError: undefined,
        pending: undefined,
      };
      this.#entries.set(issuer, entry);
    }
    return entry;
  }

  async #fetch(issuer: string, entry: Entry): Promise<void> {
    entry.attemptedAt = Date.now();
    try {
      const discovery = (await fetchIssuerJson(
        `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
        DISCOVERY_MAX_BYTES,
        this.policy,
      )) as Record<string, unknown> | null;
      if (discovery?.issuer !== issuer)
        throw new IssuerKeysUnavailable('discovery document names another issuer');
      const jwksUri = typeof discovery.jwks_uri === 'string' ? URL.parse(discovery.jwks_uri) : null;
      if (jwksUri === null) throw new IssuerKeysUnavailable('discovery document has no jwks_uri');
      const problem = urlProblem(jwksUri, this.policy);
      if (problem !== undefined) throw new IssuerKeysUnavailable(`jwks_uri ${problem}`);
      entry.keys = usableKeys(await fetchIssuerJson(jwksUri.href, JWKS_MAX_BYTES, this.policy));
      entry.fetchedAt = Date.now();
      entry.lastError = undefined;
    } catch (err) {
      if (!(err instanceof IssuerFetchFailed || err instanceof IssuerKeysUnavailable)) throw err;
      entry.lastError = err.message;
      this.onFailure(issuer, err.message);
      // Keys fetched before keep serving through a brief outage of the issuer (its workloads keep
      // working), for a few lifetimes at most: a key it retired must stop working at some point.
      if (
        entry.keys !== undefined &&
        Date.now() - entry.fetchedAt < this.limits.ttlMs * STALE_LIFETIMES
      )
        return;
      entry.keys = undefined;
      throw new IssuerKeysUnavailable(err.message);
    }
  }
}

/** `limits` default to production's; `onFailure` hears each failed fetch (at most one per issuer per `refetchMinMs`), for the operator's log. */
export function createFederatedIssuerKeys(
  policy: IssuerFetchPolicy,
  limits: Partial<IssuerKeyLimits>,
  onFailure: (issuer: string, reason: string) => void,
): FederatedIssuerKeys {
  return new CachedIssuerKeys(policy, { ...DEFAULT_LIMITS, ...limits }, onFailure);
}
