/**
 * The configuration keys more than one service reads, declared once. A service's
 * `config.ts` spreads these into its `configShape` and adds its own keys; the doc lines
 * name what the key means for that service, so each takes the words that differ.
 */
import { env } from './config.js';
import { credentialUrlKey } from './production-secrets.js';

export interface BaseConfigOptions {
  /** The service's default public port. */
  port: number;
  /** What the public port serves, when more than one thing (e.g. "realm endpoints"). */
  portServes?: string;
  /** The Postgres schema the service owns. */
  schema: string;
  /** What the service keeps in Redis. */
  redisUse: string;
  /** AUTH_URL's doc line: what the token service's public URL is to this service. */
  authUrlDoc: string;
}

/** Keys every service has: listen address, Postgres, Redis, logs, the token service's public URL. */
export function baseConfig({ port, portServes, schema, redisUse, authUrlDoc }: BaseConfigOptions) {
  return {
    PORT: env.port(port).describe(`Public HTTP port${portServes === undefined ? '' : `: ${portServes}`} (0 = ephemeral)`),
    HOST: env.string('0.0.0.0').describe('Listen address'),
    DATABASE_URL: credentialUrlKey(env.url('postgres://postgres@127.0.0.1:5432/plantstore')).describe(`Postgres URL; the service uses schema ${schema}`),
    DATABASE_POOL_MAX: env.int(10, 1, 100).describe('Postgres pool size'),
    REDIS_URL: credentialUrlKey(env.url('redis://127.0.0.1:6379')).describe(`Redis URL (${redisUse})`),
    LOG_LEVEL: env.logLevel().describe('pino log level'),
    AUTH_URL: env.url('http://localhost:8082').describe(authUrlDoc),
  };
}

/**
 * Keys of a resource server (Plant Store, account-admin): where the token service's internal API
 * is, this service's own credential for it, and the revocation re-sync.
 */
export function resourceServerConfig({ internalApiUse }: { internalApiUse?: string } = {}) {
  return {
    // Each caller its own value: the token service knows which caller a token is, and what it may call.
    INTERNAL_API_TOKEN: env.secret().describe("This service's own token for the token service's internal API; what it may call is set there (secret)"),
    TOKEN_SERVICE_INTERNAL_URL: env
      .url('http://127.0.0.1:9082')
      .describe(`The token service's internal API${internalApiUse === undefined ? '' : ` (${internalApiUse})`}`),
    REVOCATION_RESYNC_MS: env.int(5000, 100, 3_600_000).describe('Period of the revocation resync from the change feed (bounds how long a change whose publish was lost stays unseen)'),
    JWKS_CACHE_MB: env.int(32, 1, 4096).describe('Memory for the realms\' signing keys (MB); beyond it the least recently used realm is dropped'),
  };
}

/** TRUST_PROXY, for a service that reads the client's address or scheme behind the ingress. */
export function trustProxyConfig({ use }: { use?: string } = {}) {
  return {
    TRUST_PROXY: env
      .trustProxy()
      .describe(
        `Who may set X-Forwarded-For/-Proto${use === undefined ? '' : ` ${use}`}: addresses or CIDR ranges of the proxies (e.g. 10.0.0.0/8), or a hop count (0 = none; a count trusts any peer, so only where the network admits the proxy alone)`,
      ),
  };
}
