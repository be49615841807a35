import { Unauthorized } from '@plant/shared/api';
import { constantTimeEquals } from '@plant/shared/security';
import type { ClientAuthFailureRepository, ClientAuthSource } from '../client-auth/index.js';
import { TooManyFailedAuthentications } from '../platform/index.js';

/** The `realm` of the introspection endpoint's challenges. */
const REALM = 'token-introspection';

/**
 * Who may introspect tokens (RFC 7662 §2.1 wants the caller authenticated): a resource server,
 * by the read-only credential it already holds for the internal API (`RESOURCE_SERVER_TOKENS`,
 * one per resource server; account-admin's too), sent as `Authorization: Bearer`. One credential
 * per resource server, whatever tenants it serves, rather than a client in every realm; and a
 * service account's secret does not open it (automation has no business reading other tokens).
 *
 * The credential is compared with every known one in constant time. A wrong one counts as a
 * failed client authentication of the address (the token endpoint's per-address budget): over
 * it, failures are answered 429 instead of 401, and the right credential still passes, as at the
 * token endpoint (production credentials carry 256 bits; the budget surfaces and slows a search).
 */
export class ResourceServerAuthentication {
  readonly #credentials: readonly string[];

  constructor(
    credentials: readonly string[],
    private readonly failures: Pick<
      ClientAuthFailureRepository,
      'isClean' | 'ipBlockedFor' | 'recordUnknownClient'
    >,
    private readonly equals: (a: string, b: string) => boolean = constantTimeEquals,
  ) {
    this.#credentials = [...credentials];
  }

  /** Resolves for a known credential; rejects with 401 (with its challenge) or 429. */
  async authenticate(authorization: string | undefined, source: ClientAuthSource): Promise<void> {
    const presented = /^Bearer ([^\s]+)$/i.exec(authorization ?? '')?.[1];
    if (presented === undefined)
      throw new Unauthorized(
        "Introspection requires the resource server's credential: Authorization: Bearer <credential>",
        { headers: { 'www-authenticate': `Bearer realm="${REALM}"` } },
      );
    let known = false;
    for (const credential of this.#credentials) {
      if (this.equals(presented, credential)) known = true;
    }
    if (known) return;
    const wait = this.failures.isClean(source.ip)
      ? 0
      : await this.failures.ipBlockedFor(source.ip, source);
    this.failures.recordUnknownClient(source.ip, source);
    if (wait > 0) throw new TooManyFailedAuthentications(wait);
    throw new Unauthorized('The resource server credential is not valid', {
      headers: { 'www-authenticate': `Bearer realm="${REALM}", error="invalid_token"` },
    });
  }
}
