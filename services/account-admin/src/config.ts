import { env, loadConfig } from '@plant/shared';

/** Every environment variable of account-admin (docs/architecture.md). */
export const configShape = {
  PORT: env.port(8083).describe('Public HTTP port: portal and /api/v1 (0 = ephemeral)'),
  HOST: env.string('0.0.0.0').describe('Listen address'),
  PORTAL_URL: env.url('http://localhost:8083').describe('Base URL users open ({portal_url}); sign-in redirects come back here'),
  DATABASE_URL: env.url('postgres://postgres@127.0.0.1:5432/plantstore').describe('Postgres URL; the service uses schema admin'),
  DATABASE_POOL_MAX: env.int(10, 1, 100).describe('Postgres pool size'),
  REDIS_URL: env.url('redis://127.0.0.1:6379').describe('Redis URL (sessions, revocation events)'),
  LOG_LEVEL: env.logLevel().describe('pino log level'),
  AUTH_URL: env.url('http://localhost:8082').describe('Public base URL of the token service'),
  AUTH_INTERNAL_URL: env
    .url()
    .optional()
    .describe('Where this service reaches the token service\'s public port (discovery, code exchange) when AUTH_URL is not reachable from inside the deployment, e.g. http://token-service:8082; defaults to AUTH_URL'),
  ACCOUNT_ADMIN_AUDIENCE: env.string('http://localhost:8083').describe('The aud claim a bearer token must carry'),
  TOKEN_SERVICE_INTERNAL_URL: env.url('http://127.0.0.1:9082').describe("The token service's internal API"),
  INTERNAL_API_TOKEN: env.secret().describe('Shared token for the internal API (secret)'),
  SESSION_SECRET: env.secret().describe('Key signing the portal session cookie (secret)'),
  TRUST_PROXY: env.int(0, 0, 10).describe('Proxy hops whose X-Forwarded-For/-Proto to trust for the audit address (0 = none; 1 behind the ingress)'),
  SESSION_TTL_SECONDS: env.int(28_800, 300, 86_400).describe('Portal session lifetime in seconds, from sign-in (then sign in again)'),
  REVOCATION_RESYNC_MS: env.int(5000, 100, 3_600_000).describe('Period of the full revocation re-sync'),
};

export type AccountAdminConfig = ReturnType<typeof loadAccountAdminConfig>;

export function loadAccountAdminConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(configShape, source);
}
