import { parseRevocationSnapshot, toRevocationEntry, type RevocationEntry } from './revocation-entry.js';

/** The principal's state, or `not-found` (the principal never existed). Failures throw. */
export type PrincipalLookup = { kind: 'found'; entry: RevocationEntry } | { kind: 'not-found' };

export interface TokenServiceClientOptions {
  /** Base URL of the internal API, e.g. `http://127.0.0.1:9082`. */
  baseUrl: string;
  /** `INTERNAL_API_TOKEN`; sent as a bearer token, never logged. */
  internalToken: string;
  /** Aborts every request in flight (on stop). */
  signal: AbortSignal;
}

/** A failed call to the internal API; the message names the route and status, never the credentials. */
export class TokenServiceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TokenServiceError';
  }
}

/** The two revocation routes of the token service's internal API. */
export class TokenServiceClient {
  readonly #baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #signal: AbortSignal;

  constructor({ baseUrl, internalToken, signal }: TokenServiceClientOptions) {
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#headers = { authorization: `Bearer ${internalToken}`, accept: 'application/json' };
    this.#signal = signal;
  }

  /** `GET /internal/v1/revocations`: every principal with something revoked. */
  async snapshot(timeoutMs: number): Promise<RevocationEntry[]> {
    const { status, body } = await this.#get('/internal/v1/revocations', timeoutMs);
    if (status !== 200) throw new TokenServiceError(`revocation snapshot answered ${status}`);
    const entries = parseRevocationSnapshot(body);
    if (entries === undefined) throw new TokenServiceError('revocation snapshot is malformed');
    return entries;
  }

  /** `GET /internal/v1/realms/:tenant/principals/:sub`. */
  async principal(tenant: string, sub: string, timeoutMs: number): Promise<PrincipalLookup> {
    const path = `/internal/v1/realms/${encodeURIComponent(tenant)}/principals/${encodeURIComponent(sub)}`;
    const { status, body } = await this.#get(path, timeoutMs);
    if (status === 404) return { kind: 'not-found' };
    if (status !== 200) throw new TokenServiceError(`principal lookup answered ${status}`);
    const entry = toRevocationEntry(body);
    // An answer about another principal would be a token-service bug; do not trust it.
    if (entry === undefined || entry.tenant !== tenant || entry.sub !== sub) throw new TokenServiceError('principal lookup is malformed');
    return { kind: 'found', entry };
  }

  async #get(path: string, timeoutMs: number): Promise<{ status: number; body: unknown }> {
    let response: Response;
    try {
      response = await fetch(this.#baseUrl + path, {
        headers: this.#headers,
        signal: AbortSignal.any([this.#signal, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (err) {
      throw new TokenServiceError(`internal API unreachable: ${(err as Error).name}`, { cause: err });
    }
    let body: unknown;
    try {
      body = response.status === 200 ? await response.json() : undefined;
      if (response.status !== 200) await response.body?.cancel();
    } catch (err) {
      throw new TokenServiceError(`internal API body unreadable (${response.status})`, { cause: err });
    }
    return { status: response.status, body };
  }
}
