import {
  baseConfig,
  ConfigError,
  env,
  loadConfig,
  secretKey,
  trustProxyConfig,
} from '@plant/shared/config';
import { z } from 'zod';

/** Every environment variable of the token service (docs/architecture.md). */
export const configShape = {
  ...baseConfig({
    port: 8082,
    managementPort: 9182,
    portServes: 'realm endpoints',
    schema: 'auth',
    redisUse: 'revocation events, rate limits',
    authUrlDoc: 'Public base URL; issuers are {AUTH_URL}/realms/<tenant>',
  }),
  ...trustProxyConfig(),
  INTERNAL_PORT: env
    .port(9082)
    .describe('Internal API port, never routed by the ingress (0 = ephemeral)'),
  RESOURCE_SERVER_TOKENS: env
    .secretList()
    .describe(
      'Comma-separated internal API tokens, one per resource server (the Plant Store, ...): realm list, revocations, principal lookups only (secret)',
    ),
  ACCOUNT_ADMIN_TOKEN: env
    .secret()
    .describe(
      "account-admin's internal API token: what resource servers may call, and tenants, users and service accounts (secret)",
    ),
  PORTAL_URL: env
    .url('http://localhost:8083')
    .describe("The portal's base URL (its sign-in redirect URIs derive from it)"),
  SECRET_PEPPER: env.secret(32).describe('HMAC-SHA-256 key for client-secret digests (secret)'),
  KEY_ENCRYPTION_KEY: secretKey(
    z.string().refine((v) => Buffer.from(v, 'base64').length === 32, {
      error: 'must be base64 of 32 bytes',
    }),
  ).describe('AES-256-GCM key for signing keys at rest, base64 of 32 bytes (secret)'),
  COOKIE_KEYS: env
    .secretList()
    .describe('Comma-separated keys signing the sign-in cookies (secret)'),
  ACCESS_TOKEN_TTL: env.int(300, 30, 86_400).describe('Access token lifetime in seconds'),
  REALM_PROVIDER_CACHE_MB: env
    .int(128, 4, 65_536)
    .describe(
      "Memory for built realm providers (MB); beyond it the least recently used realm's provider is dropped and built again at its next request",
    ),
  REALM_KEY_CACHE_MB: env
    .int(48, 1, 65_536)
    .describe(
      "Memory for the realms' decrypted signing keys (MB); beyond it the least recently used realm's key is read from Postgres again",
    ),
  CLIENT_AUTH_FAILURES_PER_CLIENT_IP: env
    .int(10, 1, 100_000)
    .describe('Failed client authentications per client_id and IP per window before 429'),
  CLIENT_AUTH_FAILURES_PER_IP: env
    .int(50, 1, 100_000)
    .describe(
      "Failed client authentications per IP (any client) per window; above it the address's failing attempts get 429, right secrets still pass",
    ),
  CLIENT_AUTH_FAILURES_PER_CLIENT: env
    .int(500, 1, 1_000_000)
    .describe(
      'Failed authentications per client_id (all IPs) per window; above it wrong secrets get 429, right ones still pass',
    ),
  SIGN_IN_FAILURES_PER_ACCOUNT: env
    .int(5, 1, 100_000)
    .describe(
      'Password checks per account (email) and IP (IPv6: its /64) per window; a right password gives its check back, the next attempt gets 429. The account over all IPs gets 10x',
    ),
  SIGN_IN_FAILURES_PER_IP: env
    .int(50, 1, 100_000)
    .describe('Failed sign-ins per IP (IPv6: its /64), any account, per window before 429'),
  SIGN_IN_CONCURRENT_HASHES: env
    .int(0, 0, 256)
    .describe(
      'Password checks (scrypt) at once per process, each on a thread of its own at the lowest priority (never the thread pool that signs tokens); a sign-in over it gets 429 + Retry-After at once. 0 = the cores less 1, at least 1',
    ),
  INVITATION_TTL_SECONDS: env
    .int(604_800, 300, 2_592_000)
    .describe(
      'How long an invitation link works, seconds (default 7 days); a new invitation of the same email revokes the pending one',
    ),
  INVITATION_ACCEPTS_PER_IP: env
    .int(20, 1, 1_000_000)
    .describe(
      'Invitation acceptances tried (each hashes a password) per IP (IPv6: its /64) per 10 minutes, before 429 + Retry-After',
    ),
  INVITATION_ACCEPTS_TOTAL: env
    .int(1000, 1, 10_000_000)
    .describe(
      'Invitation acceptances tried from all IPs together per replica (process) per 10 minutes, before 429 + Retry-After',
    ),
  SIGN_IN_STARTS_PER_IP: env
    .int(100, 1, 1_000_000)
    .describe(
      'Authorization requests (sign-ins started, each may store an interaction for 10 minutes) per IP (IPv6: its /64) per 10 minutes, before 429 + Retry-After',
    ),
  SIGN_IN_STARTS_TOTAL: env
    .int(10_000, 1, 10_000_000)
    .describe(
      'Authorization requests from all IPs together per replica (process) per 10 minutes, before 429 + Retry-After',
    ),
  DEVICE_CODES_PER_IP: env
    .int(30, 1, 1_000_000)
    .describe(
      'Device authorization requests (plantctl login; each stores a device code for 10 minutes) per IP (IPv6: its /64) per 10 minutes, before 429 + Retry-After',
    ),
  DEVICE_CODES_TOTAL: env
    .int(2_000, 1, 10_000_000)
    .describe(
      'Device authorization requests from all IPs together per replica (process) per 10 minutes, before 429 + Retry-After: the bound on live device codes',
    ),
  DEVICE_CODE_ENTRIES_PER_IP: env
    .int(20, 1, 1_000_000)
    .describe(
      "Codes entered on a realm's device page (each a guess at a live user code) per IP (IPv6: its /64) per 10 minutes, before 429 + Retry-After",
    ),
  DEVICE_CODE_ENTRIES_TOTAL: env
    .int(10_000, 1, 10_000_000)
    .describe(
      'Codes entered on the device pages from all IPs together per replica (process) per 10 minutes, before 429 + Retry-After',
    ),
  THROTTLE_WINDOW_SECONDS: env
    .int(900, 1, 86_400)
    .describe('Window (and block time) of the failure counters, seconds'),
  FEDERATION_ALLOW_PRIVATE_ISSUERS: env
    .bool(false)
    .describe(
      'Trusted workload issuers may be on private, loopback or link-local addresses (an in-cluster Kubernetes issuer; tests). Off: such fetches are refused',
    ),
  FEDERATION_ALLOW_HTTP_ISSUERS: env
    .bool(false)
    .describe(
      'Trusted workload issuers may use http: URLs (development and tests only: refused when NODE_ENV=production)',
    ),
  FEDERATION_FETCH_TIMEOUT_MS: env
    .int(3000, 100, 30_000)
    .describe(
      "Deadline of each fetch of a trusted issuer's discovery document or JWKS, connection to last byte",
    ),
  FEDERATION_JWKS_REFETCH_SECONDS: env
    .int(30, 1, 3600)
    .describe(
      "A trusted issuer's JWKS is fetched again for an unknown kid (or after a failed fetch) at most this often per issuer",
    ),
  FEDERATION_MAX_ISSUERS_PER_TENANT: env
    .int(10, 1, 1000)
    .describe('Distinct trusted workload issuers a tenant may name over all its service accounts'),
  SSF_STREAM_BACKLOG: env
    .int(10_000, 10, 1_000_000)
    .describe(
      "Shared Signals: events a stream holds undelivered (or unacknowledged) before new ones are dropped and counted in its status (fixed at the stream's creation)",
    ),
  SSF_STREAMS_PER_TENANT: env
    .int(25, 1, 1000)
    .describe('Shared Signals: streams a tenant may have over all its receivers'),
  SSF_PUSH_TIMEOUT_MS: env
    .int(5000, 100, 60_000)
    .describe(
      'Shared Signals: deadline of each push (RFC 8935) to a receiver, connection to answer',
    ),
  SSF_PUSH_CONCURRENCY_PER_TENANT: env
    .int(4, 1, 100)
    .describe(
      "Shared Signals: push streams of one tenant a replica delivers at once (the tenant's own lanes; other tenants never wait for them)",
    ),
  SSF_POLL_WAIT_SECONDS: env
    .int(25, 1, 120)
    .describe(
      'Shared Signals: how long a long poll (RFC 8936, returnImmediately false) waits for an event before answering none',
    ),
  SSF_POLL_MAX_WAITERS: env
    .int(200, 1, 100_000)
    .describe(
      'Shared Signals: long polls one replica holds open at once; beyond it a poll answers at once',
    ),
  SSF_MIN_VERIFICATION_INTERVAL_SECONDS: env
    .int(5, 0, 3600)
    .describe(
      "Shared Signals: a stream's verification requests at most this often (min_verification_interval; 429 sooner)",
    ),
  PLANT_STORE_AUDIENCE: env
    .string('http://localhost:8081')
    .describe('aud of Plant Store tokens (the default resource)'),
  ACCOUNT_ADMIN_AUDIENCE: env
    .string('http://localhost:8083')
    .describe('aud of account-admin API tokens (resource=...)'),
  API_AUDIENCES: z
    .string()
    .default('')
    .refine((v) => listOf(v).every((audience) => URL.canParse(audience)), {
      error: 'must be comma-separated absolute URLs',
    })
    .describe(
      "Comma-separated audiences (absolute URLs) of other APIs that verify tokens with @plant/resource-auth: service accounts may ask for one with resource=, and get the role's scope for it; empty: none",
    ),
  SECRET_SCANNING_GITHUB_KEYS: z
    .string()
    .default('')
    .refine((v) => v === '' || v.startsWith('https://') || !v.includes('://'), {
      error: 'must be a file path or an https URL',
    })
    .describe(
      "GitHub secret scanning's verification keys: a file path or an https URL of a document shaped like GitHub's public-keys document; empty: POST /secret-scanning/github answers 404",
    ),
  SECRET_SCANNING_KEYS_REFETCH_SECONDS: env
    .int(60, 1, 86_400)
    .describe(
      'The secret scanning key document is read again for an unknown key id at most this often',
    ),
  WEBAUTHN_RP_ID: z
    .string()
    .default('')
    .refine(
      (v) =>
        v === '' || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(v),
      {
        error: 'must be a lower-case host name',
      },
    )
    .describe(
      "Passkeys' relying party ID: AUTH_URL's host or a parent domain of it (passkeys are bound to it: changing it strands every enrolled passkey); empty: AUTH_URL's hostname",
    ),
  DPOP_NONCE_KEYS: env
    .optionalSecretList()
    .describe(
      "Comma-separated keys (32+ characters) of the token endpoint's DPoP nonces (RFC 9449 §8): set, every DPoP proof there must carry a nonce it issued; empty: no nonce (secret)",
    ),
};

export type TokenServiceConfig = ReturnType<typeof loadTokenServiceConfig>;

export function loadTokenServiceConfig(source: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(configShape, source);
  assertOwnCredentials(config.RESOURCE_SERVER_TOKENS, config.ACCOUNT_ADMIN_TOKEN);
  // A workload token's keys fetched in clear could be swapped by anyone on the path.
  if (source.NODE_ENV === 'production' && config.FEDERATION_ALLOW_HTTP_ISSUERS)
    throw new ConfigError(
      'FEDERATION_ALLOW_HTTP_ISSUERS',
      'must be false in production (NODE_ENV=production): trusted issuers are fetched over https only',
    );
  const authHost = new URL(config.AUTH_URL).hostname;
  const rpId = config.WEBAUTHN_RP_ID;
  if (rpId !== '' && authHost !== rpId && !authHost.endsWith(`.${rpId}`))
    throw new ConfigError(
      'WEBAUTHN_RP_ID',
      `must be AUTH_URL's host (${authHost}) or a parent domain of it: browsers refuse any other`,
    );
  return config;
}

/** The passkey relying party of this configuration: WEBAUTHN_RP_ID (or AUTH_URL's host) and AUTH_URL's origin. */
export function relyingPartyOf(config: Pick<TokenServiceConfig, 'AUTH_URL' | 'WEBAUTHN_RP_ID'>) {
  const url = new URL(config.AUTH_URL);
  return { id: config.WEBAUTHN_RP_ID || url.hostname, origin: url.origin, name: 'Plant Store' };
}

const MIN_TOKEN_LENGTH = 16;

/** A token two callers share would make one of them the other: the internal API tells callers apart by token alone. */
function assertOwnCredentials(resourceServerTokens: string, accountAdminToken: string): void {
  const tokens = resourceServerTokensOf(resourceServerTokens);
  if (tokens.length === 0) throw new ConfigError('RESOURCE_SERVER_TOKENS', 'lists no token');
  if (tokens.some((token) => token.length < MIN_TOKEN_LENGTH)) {
    throw new ConfigError(
      'RESOURCE_SERVER_TOKENS',
      `holds a token shorter than ${MIN_TOKEN_LENGTH} characters`,
    );
  }
  if (new Set(tokens).size !== tokens.length) {
    throw new ConfigError(
      'RESOURCE_SERVER_TOKENS',
      'lists a token twice: each resource server holds a credential of its own',
    );
  }
  if (tokens.includes(accountAdminToken)) {
    throw new ConfigError(
      'ACCOUNT_ADMIN_TOKEN',
      'must differ from every RESOURCE_SERVER_TOKENS value: each caller holds a credential of its own',
    );
  }
}

/** The tokens of RESOURCE_SERVER_TOKENS, as the production check reads the list. */
export function resourceServerTokensOf(value: string): string[] {
  return listOf(value);
}

/** The items of a comma-separated list (API_AUDIENCES, DPOP_NONCE_KEYS, RESOURCE_SERVER_TOKENS). */
export function listOf(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** The APIs a service account's token may be for, and so the targets of a token exchange: the Plant Store and `API_AUDIENCES`. */
export function exchangeAudiencesOf(
  config: Pick<TokenServiceConfig, 'PLANT_STORE_AUDIENCE' | 'API_AUDIENCES'>,
): string[] {
  return [config.PLANT_STORE_AUDIENCE, ...listOf(config.API_AUDIENCES)];
}
