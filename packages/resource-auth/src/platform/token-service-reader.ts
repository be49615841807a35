/**
 * What a resource server reads of the token service's internal API: the revocation snapshot,
 * its change feed, one principal's state and the realm list. Every call goes through
 * `callInternalApi` (credentials, request id, timeout); every failure is an `InternalApiError`,
 * which a caller may turn into its own error with `mapError`. The services' client
 * (`TokenServiceClient` of @plant/shared/token-service-client) extends it with the management routes.
 */
import {
  callInternalApi,
  InternalApiError,
  type InternalApiTarget,
} from './internal-api-request.js';
import { isTenantName } from './realm-names.js';
import {
  parseRevocationChanges,
  parseRevocationSnapshot,
  toRevocationEntry,
} from './revocation-entry.js';
import type { RevocationChanges, RevocationEntry, RevocationSnapshot } from './revocation-types.js';

/** The principal's state, or `not-found` (the principal never existed). Failures throw. */
export type PrincipalLookup = { kind: 'found'; entry: RevocationEntry } | { kind: 'not-found' };

/** An answer with the size of its body in bytes (what a resync moved). */
export type Sized<T> = T & { bytes: number };

export interface TokenServiceClientOptions extends InternalApiTarget {
  /** Timeout of a call that names none, ms (default 5000). */
  timeoutMs?: number;
  /** What a failure becomes for the caller (account-admin: its 503 or the 4xx passed on). Default: the `InternalApiError` itself. */
  mapError?: (err: InternalApiError) => Error;
}

/** The revocation routes read a body only from a 200: any other answer is a failure (or the lookup's 404). */
const readsOnlyOk = (status: number) => status === 200;
const seg = encodeURIComponent;
/** `/internal/v1/realms/<tenant>`, escaped. */
export const realmPath = (tenant: string) => `/internal/v1/realms/${seg(tenant)}`;

export class TokenServiceReader {
  protected readonly target: InternalApiTarget;
  protected readonly timeoutMs: number;
  readonly #mapError: (err: InternalApiError) => Error;

  constructor({ timeoutMs = 5000, mapError = (err) => err, ...target }: TokenServiceClientOptions) {
    this.target = target;
    this.timeoutMs = timeoutMs;
    this.#mapError = mapError;
  }

  // ---- Revocation (resource servers) -------------------------------------------------

  /** `GET /internal/v1/revocations`: every revocation entry still needed, and the feed position it brings the reader to. */
  snapshot(timeoutMs = this.timeoutMs): Promise<Sized<RevocationSnapshot>> {
    return this.mapped(async () => {
      const { status, body, bytes } = await callInternalApi(this.target, {
        path: '/internal/v1/revocations',
        timeoutMs,
        readsBody: readsOnlyOk,
      });
      if (status !== 200)
        throw new InternalApiError(`revocation snapshot answered ${status}`, { status });
      const snapshot = parseRevocationSnapshot(body);
      if (snapshot === undefined) throw new InternalApiError('revocation snapshot is malformed');
      return { ...snapshot, bytes };
    });
  }

  /** `GET /internal/v1/revocations/changes?after=`: one page of the changes after `position`, or `reset`. */
  changes(position: string, timeoutMs = this.timeoutMs): Promise<Sized<RevocationChanges>> {
    return this.mapped(async () => {
      const path = `/internal/v1/revocations/changes?after=${position}`;
      const { status, body, bytes } = await callInternalApi(this.target, {
        path,
        timeoutMs,
        readsBody: readsOnlyOk,
      });
      if (status !== 200)
        throw new InternalApiError(`revocation changes answered ${status}`, { status });
      const changes = parseRevocationChanges(body);
      // A page must move forward: a token service answering the same position with `more` would loop us.
      if (
        changes === undefined ||
        (!changes.reset && changes.more && BigInt(changes.position) <= BigInt(position))
      )
        throw new InternalApiError('revocation changes are malformed');
      return { ...changes, bytes };
    });
  }

  /** `GET /internal/v1/realms/:tenant/principals/:sub`. */
  principal(tenant: string, sub: string, timeoutMs = this.timeoutMs): Promise<PrincipalLookup> {
    return this.mapped(async () => {
      const path = `${realmPath(tenant)}/principals/${seg(sub)}`;
      const { status, body } = await callInternalApi(this.target, {
        path,
        timeoutMs,
        readsBody: readsOnlyOk,
      });
      if (status === 404) return { kind: 'not-found' };
      if (status !== 200)
        throw new InternalApiError(`principal lookup answered ${status}`, { status });
      const entry = toRevocationEntry(body);
      // An answer about another principal would be a token-service bug; do not trust it.
      if (entry === undefined || entry.tenant !== tenant || entry.sub !== sub)
        throw new InternalApiError('principal lookup is malformed');
      return { kind: 'found', entry };
    });
  }

  /** `GET /internal/v1/realms`: the name of every realm. A malformed answer is a failure, never a partial list. */
  realms(timeoutMs = this.timeoutMs): Promise<string[]> {
    return this.mapped(async () => {
      const { status, body } = await callInternalApi(this.target, {
        path: '/internal/v1/realms',
        timeoutMs,
        readsBody: readsOnlyOk,
      });
      if (status !== 200) throw new InternalApiError(`realm list answered ${status}`, { status });
      const names = (body as { realms?: unknown } | null)?.realms;
      if (
        !Array.isArray(names) ||
        !names.every((name) => typeof name === 'string' && isTenantName(name))
      )
        throw new InternalApiError('realm list is malformed');
      return names as string[];
    });
  }

  /** `call`, its `InternalApiError` turned into the caller's error by `mapError`. */
  protected async mapped<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw err instanceof InternalApiError ? this.#mapError(err) : err;
    }
  }
}
