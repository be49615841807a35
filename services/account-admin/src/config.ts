import { z } from 'zod';
import {
  baseConfig,
  credentialUrlKey,
  env,
  loadConfig,
  resourceServerConfig,
  trustProxyConfig,
} from '@plant/shared/config';

/** Every environment variable of account-admin (docs/architecture.md). */
export const configShape = {
  ...baseConfig({
    port: 8083,
    managementPort: 9183,
    portServes: 'portal and /api/v1',
    schema: 'admin',
    redisUse: 'sessions, revocation events',
    authUrlDoc: 'Public base URL of the token service',
  }),
  ...resourceServerConfig(),
  ...trustProxyConfig({ use: 'for the audit address' }),
  PORTAL_URL: env
    .url('http://localhost:8083')
    .describe('Base URL users open ({portal_url}); sign-in redirects come back here'),
  AUTH_INTERNAL_URL: env
    .url()
    .optional()
    .describe(
      "Where this service reaches the token service's public port (discovery, code exchange) when AUTH_URL is not reachable from inside the deployment, e.g. http://token-service:8082; defaults to AUTH_URL",
    ),
  ACCOUNT_ADMIN_AUDIENCE: env
    .string('http://localhost:8083')
    .describe('The aud claim a bearer token must carry'),
  SESSION_SECRET: env.secret().describe('Key signing the portal session cookie (secret)'),
  SESSION_STORE_WAIT_MS: env
    .int(5000, 100, 60_000)
    .describe(
      "How long a portal request waits for Redis while it cannot be reached (a Sentinel failover, a restart) before answering 503; keep it above the sentinels' down-after-milliseconds plus a few seconds (the vote, the promotion, the reconnect)",
    ),
  SIGN_IN_STARTS_PER_IP: env
    .int(100, 1, 1_000_000)
    .describe(
      'Sign-ins started at GET /login (each keeps a pending sign-in in Redis for 10 minutes) per IP (IPv6: its /64) per 10 minutes, before 429 + Retry-After',
    ),
  SIGN_IN_STARTS_TOTAL: env
    .int(10_000, 1, 10_000_000)
    .describe(
      'Sign-ins started at GET /login from all IPs together per replica (process) per 10 minutes, before 429 + Retry-After',
    ),
  SMTP_URL: credentialUrlKey(
    z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL' }).optional(),
  ).describe(
    'Where invitation e-mails go: smtp://user:password@host:587 (STARTTLS when offered) or smtps://…:465; unset = no e-mail, the admin copies the link (secret: give it as SMTP_URL_FILE)',
  ),
  SMTP_FROM: env
    .string('Plant Store <no-reply@localhost>')
    .describe('The From of invitation e-mails'),
  SESSION_TTL_SECONDS: env
    .int(28_800, 300, 86_400)
    .describe('Portal session lifetime in seconds, from sign-in (then sign in again)'),
};

export type AccountAdminConfig = ReturnType<typeof loadAccountAdminConfig>;

export function loadAccountAdminConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(configShape, source);
}
