/**
 * Wires account-admin: Postgres (audit trail), Redis (sessions), the token service's
 * internal API, bearer verification with the revocation map, the public and the management listener.
 */
import {
  createBearerAuth,
  createRedisReplayStore,
  revocationSyncFromConfig,
  type RevocationSync,
} from '@plant/resource-auth';
import { createDatabase } from '@plant/shared/db';
import {
  createManagementApp,
  createMetricsRegistry,
  readyWhen,
  registerCacheMetrics,
  startWebServer,
  type HttpApp,
} from '@plant/shared/http';
import { currentRequestId, type Logger } from '@plant/shared/logging';
import { inConsumerSpan } from '@plant/shared/tracing';
import { createRedisClient, redisTargetOf } from '@plant/shared/redis';
import { createSourceBudget } from '@plant/shared/security';
import { TokenServiceClient } from '@plant/shared/token-service-client';
import { Counter } from 'prom-client';
import { createSmtpMailer } from './people/index.js';
import type { AccountAdminConfig } from './config.js';
import { createAuditRepository } from './audit/index.js';
import { SCHEMA } from './migrations/index.js';
import {
  createSessionStore,
  API_REALM,
  SIGN_IN_TTL_SECONDS,
  createPortalSessions,
} from './sessions/index.js';
import { toAdminError } from './platform/index.js';
import { createApp } from './http/index.js';
import { createOidcClients } from './sign-in/index.js';

export interface AccountAdminOptions {
  /** Without it, bearer tokens are checked for signature and claims only (some component tests). */
  revocation?: boolean;
  /** Where bearer verification fetches realm keys and the realm list (default: the token service's internal API). */
  jwksBaseUrl?: string;
}

export interface AccountAdmin {
  app: ReturnType<typeof createApp>;
  /** The management port's listener: /healthz, /readyz (database, Redis, revocation snapshot), /metrics. */
  management: HttpApp;
  /** Starts the revocation map; call before serving. */
  start(): Promise<void>;
  close(): Promise<void>;
}

// long: the composition root: it only wires, one construction per part in the order they depend on each other.
export function createAccountAdmin(
  config: AccountAdminConfig,
  logger: Logger,
  options: AccountAdminOptions = {},
): AccountAdmin {
  const db = createDatabase({
    connectionString: config.DATABASE_URL,
    schema: SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
    applicationName: 'account-admin',
    logger,
  });
  const redis = createRedisClient(redisTargetOf(config), {
    connectTimeout: 2000,
    // A session read or write waits for Redis up to SESSION_STORE_WAIT_MS (a Sentinel failover
    // takes seconds), so a user who signed in keeps their session through one instead of
    // meeting an error page; reconnect attempts come at most 500 ms apart meanwhile.
    commandTimeout: config.SESSION_STORE_WAIT_MS,
    retryStrategy: (attempt: number) => Math.min(50 * attempt, 500),
    // Commands that timed out stay in ioredis' offline queue: emptying it every 60 reconnect
    // attempts (about 30 s) bounds it by the request rate over that time in a long outage.
    maxRetriesPerRequest: 60,
  });
  redis.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis error'));
  const metrics = createMetricsRegistry('account-admin');
  const auditFailures = new Counter({
    name: 'audit_write_failures_total',
    help: 'Audit events that could not be written after an action had happened (logged in full for replay)',
    registers: [metrics],
  });

  const invitationEmails = new Counter({
    name: 'invitation_emails_total',
    help: 'Invitation e-mails by outcome: sent, failed (the admin copies the link), not_configured (no SMTP_URL)',
    labelNames: ['outcome'],
    registers: [metrics],
  });
  for (const outcome of ['sent', 'failed', 'not_configured']) invitationEmails.inc({ outcome }, 0);
  const mailer =
    config.SMTP_URL === undefined ? undefined : createSmtpMailer(config.SMTP_URL, config.SMTP_FROM);

  const tokenService = new TokenServiceClient({
    baseUrl: config.TOKEN_SERVICE_INTERNAL_URL,
    internalToken: config.INTERNAL_API_TOKEN,
    mapError: toAdminError,
  });
  const revocation: RevocationSync | undefined =
    options.revocation === false
      ? undefined
      : revocationSyncFromConfig(config, {
          logger,
          metrics,
          consumerSpan: inConsumerSpan,
          requestId: currentRequestId,
        });
  // plantctl's tokens are DPoP-bound (docs/device-flow.md): proofs for `{PORTAL_URL}/api/v1/...`,
  // their ids claimed in Redis so a proof is accepted once across every replica.
  const dpopReplay = createRedisReplayStore({ redis: redisTargetOf(config), logger });
  const auth = createBearerAuth({
    authUrl: config.AUTH_URL,
    audience: config.ACCOUNT_ADMIN_AUDIENCE,
    dpop: { publicUrl: config.PORTAL_URL, replay: dpopReplay },
    jwksBaseUrl: options.jwksBaseUrl ?? config.TOKEN_SERVICE_INTERNAL_URL,
    internalToken: config.INTERNAL_API_TOKEN,
    realm: API_REALM,
    logger,
    requestId: currentRequestId,
    jwksCacheBytes: config.JWKS_CACHE_MB * 1024 * 1024,
    ...(revocation ? { revocation } : {}),
  });
  registerCacheMetrics(metrics, {
    jwks: () => auth.jwksStats(),
    verified_tokens: () => auth.verifiedTokenStats(),
  });
  const audit = createAuditRepository(db);
  const store = createSessionStore(redis, config.SESSION_SECRET);
  const sessions = createPortalSessions({
    store,
    tokenService,
    revocation,
    secret: config.SESSION_SECRET,
    secure: config.PORTAL_URL.startsWith('https:'),
    ttlSeconds: config.SESSION_TTL_SECONDS,
  });
  const oidc = createOidcClients({
    authUrl: config.AUTH_URL,
    authInternalUrl: config.AUTH_INTERNAL_URL,
    portalUrl: config.PORTAL_URL,
  });
  // Pending sign-ins (Redis records of GET /login) per source and in total, over their lifetime.
  const signInStarts = createSourceBudget(
    redis,
    'portal-signin-start',
    {
      perSource: config.SIGN_IN_STARTS_PER_IP,
      total: config.SIGN_IN_STARTS_TOTAL,
      windowSeconds: SIGN_IN_TTL_SECONDS,
    },
    logger,
  );

  const app = createApp({
    accounts: { tokenService, audit, logger, onAuditWriteFailure: () => auditFailures.inc() },
    people: {
      tokenService,
      audit,
      logger,
      onAuditWriteFailure: () => auditFailures.inc(),
      mailer,
      onEmail: (outcome) => invitationEmails.inc({ outcome }),
    },
    audit: {
      listNewestFirst: (tenant, limit, beforeId) => audit.listNewestFirst(tenant, limit, beforeId),
      listRealmEvents: (tenant, limit, before) =>
        tokenService.listSecurityEvents(tenant, { before, limit }),
    },
    tokenService,
    store,
    sessions,
    signInStarts,
    oidc,
    auth,
    logger,
    metrics,
    portalUrl: config.PORTAL_URL,
    authUrl: config.AUTH_URL,
    audience: config.ACCOUNT_ADMIN_AUDIENCE,
    sessionSecret: config.SESSION_SECRET,
    trustProxy: config.TRUST_PROXY,
  });
  const management = createManagementApp({
    logger,
    metrics,
    readiness: {
      database: () => audit.ping(),
      redis: () => store.ping(),
      ...(revocation
        ? { revocation: readyWhen(revocation, 'revocation snapshot not loaded') }
        : {}),
    },
  });

  return {
    app,
    management,
    async start() {
      // The pool's first connection opens while the revocation snapshot loads rather than on the
      // first readiness probe after it; a failure here is the probe's to report.
      audit.ping().catch(() => undefined);
      await revocation?.start();
    },
    async close() {
      await revocation?.stop();
      auth.close();
      await dpopReplay.close();
      redis.disconnect();
      mailer?.close();
      await db.destroy();
    },
  };
}

export interface AccountAdminProcess {
  port: number;
  managementPort: number;
  stop(): Promise<void>;
}

/** Starts the service and listens on both ports; `stop` drains in-flight requests, then closes pools and Redis. */
export async function runAccountAdmin(
  config: AccountAdminConfig,
  logger: Logger,
): Promise<AccountAdminProcess> {
  const service = createAccountAdmin(config, logger);
  await service.start();
  const web = await startWebServer(service.app, { port: config.PORT, host: config.HOST });
  const management = await startWebServer(service.management, {
    port: config.MANAGEMENT_PORT,
    host: config.MANAGEMENT_HOST,
  });
  return {
    port: web.port,
    managementPort: management.port,
    async stop() {
      // Probes and the last scrape answer while the public port drains.
      await web.close();
      await management.close();
      await service.close();
    },
  };
}
