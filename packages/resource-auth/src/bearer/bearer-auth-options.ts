/** What `createBearerAuth` is configured with (bearer-auth.ts has the checks). */
import type { Logger } from '../platform/logger.js';
import type { DpopOptions } from '../dpop/dpop-check.js';
import type { RevocationChecker } from '../revocation/types.js';

export interface BearerAuthOptions {
  /** Public base URL of the token service: a token's `iss` must be `{authUrl}/realms/<tenant>`. */
  authUrl: string;
  /** The `aud` this resource server accepts (e.g. `PLANT_STORE_AUDIENCE`), or several (the token service's introspection). */
  audience: string | readonly string[];
  /** Base URL of the token service's internal API: `/internal/v1/realms/<tenant>/jwks` and the realm list `/internal/v1/realms`. */
  jwksBaseUrl: string;
  /** `INTERNAL_API_TOKEN`: the realm list is behind it. */
  internalToken: string;
  /** The `realm` of `WWW-Authenticate: Bearer realm="..."` (e.g. `plants`). Not a tenant. */
  realm: string;
  /** Checked on every request after the token verified; absent means no revocation (tests only). */
  revocation?: RevocationChecker;
  /** Accept `Authorization: DPoP` with proofs (RFC 9449); absent: DPoP-bound tokens are refused (they cannot be used here). */
  dpop?: DpopOptions;
  logger: Logger;
  /** The id of the request being served, sent with the realm-list fetches (`currentRequestId` of @plant/shared/logging). */
  requestId?: () => string | undefined;
  /** Allowed clock skew for `exp`/`nbf`/`iat`, in seconds (default 5). */
  clockToleranceSec?: number;
  /** Memory for verified tokens, least recently used dropped first (default 32 MB; 0 disables). */
  verifiedCacheBytes?: number;
  /** Minimum time between two JWKS fetches of one realm (default 5 000 ms). */
  jwksMinRefetchMs?: number;
  /** Age after which a realm's key set is refetched on its next use (default 10 min). */
  jwksMaxAgeMs?: number;
  /** Memory for the realms' keys (JWKS_CACHE_MB), least recently used realm dropped first (default 64 MB): keep it above what the realms in use need. */
  jwksCacheBytes?: number;
  /** Refetches for kids a cached key set lacks, all realms together: at once (default 20) and per second after (default 10). */
  jwksRefetchBurst?: number;
  jwksRefetchPerSecond?: number;
  /** Realm-list loads (a token of a realm not yet listed waits for one) at once (default 5) and per second after (default 1). */
  realmListBurst?: number;
  realmListPerSecond?: number;
}
