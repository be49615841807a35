/**
 * The configuration keys more than one service reads, declared once. A service's
 * `config.ts` spreads these into its `configShape` and adds its own keys; the doc lines
 * name what the key means for that service, so each takes the words that differ.
 */
import { env } from './config.js';
import { credentialUrlKey } from './production-secrets.js';
import { redisConfig } from '../redis/index.js';

export interface BaseConfigOptions {
  /** The service's default public port. */
  port: number;
  /** What the public port serves, when more than one thing (e.g. "realm endpoints"). */
  portServes?: string;
  /** The service's default management port (probes, metrics): distinct per service, so all three run on one machine. */
  managementPort: number;
  /** The Postgres schema the service owns. */
  schema: string;
  /** What the service keeps in Redis. */
  redisUse: string;
  /** AUTH_URL's doc line: what the token service's public URL is to this service. */
  authUrlDoc: string;
}

/** Keys every service has: listen addresses, Postgres, Redis, logs, the token service's public URL. */
export function baseConfig({
  port,
  portServes,
  managementPort,
  schema,
  redisUse,
  authUrlDoc,
}: BaseConfigOptions) {
  return {
    PORT: env
      .port(port)
      .describe(
        `Public HTTP port${portServes === undefined ? '' : `: ${portServes}`} (0 = ephemeral)`,
      ),
    HOST: env.string('0.0.0.0').describe('Listen address'),
    // Probes and metrics never on the public port (there they are 404): a port of its own, which
    // a NetworkPolicy admits from the monitoring namespace alone (management-app.ts).
    MANAGEMENT_PORT: env
      .port(managementPort)
      .describe(
        'Management port: GET /healthz, /readyz, /metrics, never routed by the ingress (0 = ephemeral)',
      ),
    MANAGEMENT_HOST: env
      .string('127.0.0.1')
      .describe(
        'Listen address of the management port: loopback unless a deployment opens it (a pod: 0.0.0.0, for the kubelet and Prometheus)',
      ),
    DATABASE_URL: credentialUrlKey(
      env.url('postgres://postgres@127.0.0.1:5432/plantstore'),
    ).describe(`Postgres URL; the service uses schema ${schema}`),
    DATABASE_POOL_MAX: env.int(10, 1, 100).describe('Postgres pool size'),
    ...redisConfig({ redisUse }),
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
    INTERNAL_API_TOKEN: env
      .secret()
      .describe(
        "This service's own token for the token service's internal API; what it may call is set there (secret)",
      ),
    TOKEN_SERVICE_INTERNAL_URL: env
      .url('http://127.0.0.1:9082')
      .describe(
        `The token service's internal API${internalApiUse === undefined ? '' : ` (${internalApiUse})`}`,
      ),
    REVOCATION_RESYNC_MS: env
      .int(5000, 100, 3_600_000)
      .describe(
        'Period of the revocation resync from the change feed (bounds how long a change whose publish was lost stays unseen)',
      ),
    JWKS_CACHE_MB: env
      .int(64, 1, 4096)
      .describe(
        "Memory for the realms' signing keys (MB); beyond it the least recently used realm is dropped",
      ),
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
