import { createDatabase, createMetricsRegistry, REVOCATION_CHANNEL, type HttpApp, type Knex, type Logger, type RevocationEntry } from '@plant/shared';
import { Redis } from 'ioredis';
import type { TokenServiceConfig } from './config.js';
import { deleteExpiredOidcPayloads } from './data-access/oidc-payload-repository.js';
import { SCHEMA } from './data-access/migrations/index.js';
import type { IdentityContext } from './domain/identity-context.js';
import { KeyEncryption } from './domain/key-encryption.js';
import { KEY_ROTATION_CHANNEL } from './domain/realm-naming.js';
import { RevocationPublisher } from './domain/revocation-publisher.js';
import { SignInThrottle } from './domain/sign-in-throttle.js';
import { createInternalApp } from './entry-points/api/internal-app.js';
import { createPublicApp } from './entry-points/api/public-app.js';
import { CLIENT_AUTH_FAILURE_CHANNEL } from './provider/client-auth-failure-hints.js';
import { ClientAuthThrottle } from './provider/client-auth-throttle.js';
import { ClientDirectory } from './provider/client-directory.js';
import { RealmProviders } from './provider/realm-providers.js';
import { TokenMetrics } from './provider/token-metrics.js';
import { UsageRecorder } from './provider/usage-recorder.js';

const CLEANUP_MS = 10 * 60_000;

export interface TokenService {
  /** The public listener: probes, the realms' endpoints and sign-in pages. */
  publicApp: HttpApp;
  /** The internal API's listener. */
  internalApp: HttpApp;
  db: Knex;
  redis: Redis;
  providers: RealmProviders;
  publisher: RevocationPublisher;
  usage: UsageRecorder;
  /** Close pools and connections (after the listeners have drained). */
  close(): Promise<void>;
}

function isRevocationEntry(value: unknown): value is RevocationEntry {
  const v = value as Partial<RevocationEntry> | null;
  return typeof v?.tenant === 'string' && typeof v.sub === 'string';
}

export async function createTokenService(config: TokenServiceConfig, logger: Logger): Promise<TokenService> {
  const db = createDatabase({ connectionString: config.DATABASE_URL, schema: SCHEMA, poolMax: config.DATABASE_POOL_MAX, applicationName: 'token-service', logger });
  const redisOptions = { maxRetriesPerRequest: 2, enableAutoPipelining: true, lazyConnect: false };
  const redis = new Redis(config.REDIS_URL, redisOptions);
  const subscriber = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  for (const client of [redis, subscriber]) client.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis error'));

  const encryption = new KeyEncryption(config.KEY_ENCRYPTION_KEY);
  const directory = new ClientDirectory(db);
  const publisher = new RevocationPublisher(redis, logger);
  const usage = new UsageRecorder(db, logger);
  usage.start();
  const clientThrottle = new ClientAuthThrottle(
    redis,
    {
      perClientIp: config.CLIENT_AUTH_FAILURES_PER_CLIENT_IP,
      perIp: config.CLIENT_AUTH_FAILURES_PER_IP,
      perClient: config.CLIENT_AUTH_FAILURES_PER_CLIENT,
      windowSeconds: config.THROTTLE_WINDOW_SECONDS,
    },
    logger,
  );
  const signInThrottle = new SignInThrottle(
    redis,
    { perAccountIp: config.SIGN_IN_FAILURES_PER_ACCOUNT, perIp: config.SIGN_IN_FAILURES_PER_IP, windowSeconds: config.THROTTLE_WINDOW_SECONDS },
    logger,
  );
  const metrics = createMetricsRegistry('token-service');
  const providers = new RealmProviders(db, encryption, { config, db, directory, usage, throttle: clientThrottle, logger, metrics: new TokenMetrics(metrics) });

  // This replica's cache drops a changed account before the API answers; others hear it on Redis.
  publisher.onLocal((entry) => directory.invalidate(entry.tenant, entry.sub));
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === CLIENT_AUTH_FAILURE_CHANNEL) {
      clientThrottle.hints?.onAnnouncedFailure(message);
      return;
    }
    try {
      const parsed: unknown = JSON.parse(message);
      if (channel === REVOCATION_CHANNEL && isRevocationEntry(parsed)) directory.invalidate(parsed.tenant, parsed.sub);
      else if (channel === KEY_ROTATION_CHANNEL && typeof (parsed as { tenant?: unknown })?.tenant === 'string') providers.invalidate((parsed as { tenant: string }).tenant);
    } catch {
      logger.warn({ channel }, 'ignored a malformed event');
    }
  });
  // After a reconnect events may have been missed: start from Postgres again.
  subscriber.on('ready', () => directory.clear());
  await subscriber.subscribe(REVOCATION_CHANNEL, KEY_ROTATION_CHANNEL, CLIENT_AUTH_FAILURE_CHANNEL);
  // Failure announcements missed while disconnected: distrust the hints until rebuilt from Redis,
  // once the channel is subscribed again.
  const failureHints = clientThrottle.hints;
  if (failureHints) {
    subscriber.on('close', () => failureHints.suspend());
    subscriber.on('ready', () => {
      subscriber.subscribe(CLIENT_AUTH_FAILURE_CHANNEL).then(() => failureHints.resync(), () => failureHints.suspend());
    });
    await failureHints.resync();
  }

  const cleanup = setInterval(() => {
    deleteExpiredOidcPayloads(db).catch((err: Error) => logger.warn({ err: { message: err.message } }, 'oidc payload cleanup failed'));
  }, CLEANUP_MS);
  cleanup.unref();

  const identity: IdentityContext = { db, secretPepper: config.SECRET_PEPPER, publisher };
  const readiness = {
    database: () => db.raw('select 1'),
    redis: () => redis.ping(),
  };
  const publicApp = createPublicApp({
    logger,
    metrics,
    readiness,
    providers,
    db,
    accessTokenTtl: config.ACCESS_TOKEN_TTL,
    trustProxy: config.TRUST_PROXY,
    interactions: { providers, db, throttle: signInThrottle, csrfKey: config.COOKIE_KEYS, portalUrl: config.PORTAL_URL, logger },
  });
  const internalApp = createInternalApp({ logger, db, identity, internalApiToken: config.INTERNAL_API_TOKEN, accessTokenTtl: config.ACCESS_TOKEN_TTL });

  return {
    publicApp,
    internalApp,
    db,
    redis,
    providers,
    publisher,
    usage,
    async close() {
      clearInterval(cleanup);
      await usage.stop();
      subscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
      await db.destroy();
    },
  };
}
