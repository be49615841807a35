import { availableParallelism } from 'node:os';
import { createDatabase, createMetricsRegistry, parseRevocationMessage, registerCacheMetrics, REVOCATION_CHANNEL, type HttpApp, type Knex, type Logger } from '@plant/shared';
import { Redis } from 'ioredis';
import { Counter, Gauge } from 'prom-client';
import { resourceServerTokensOf, type TokenServiceConfig } from './config.js';
import { CLIENT_AUTH_FAILURE_CHANNEL, createClientAuthFailureRepository } from './data-access/client-auth-failure-repository.js';
import { SCHEMA } from './data-access/migrations/index.js';
import { createRepositories } from './data-access/repositories.js';
import { createSignInFailureRepository } from './data-access/sign-in-failure-repository.js';
import { ClientAuthentication } from './domain/authenticate-client.js';
import { createClientSecretDigester } from './domain/client-secrets.js';
import type { IdentityContext } from './domain/identity-context.js';
import { KeyEncryption } from './domain/key-encryption.js';
import { defaultPasswordCheckers, PasswordCheckers } from './domain/password-checkers.js';
import { KEY_ROTATION_CHANNEL } from './domain/realm-naming.js';
import { CredentialChangeFollower } from './domain/follow-credential-changes.js';
import { RevocationPruner } from './domain/prune-revocations.js';
import { RevocationPublisher } from './domain/revocation-publisher.js';
import { SignInThrottle } from './domain/sign-in-throttle.js';
import { UsageRecorder } from './domain/usage-recorder.js';
import { createInternalApp } from './entry-points/api/internal-app.js';
import { createPublicApp } from './entry-points/api/public-app.js';
import { RealmProviders } from './provider/realm-providers.js';
import { TokenMetrics } from './provider/token-metrics.js';

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
  /** Forgets revocation state older than the horizon (tests run it at will). */
  pruner: RevocationPruner;
  /** Forgets cached credentials the change feed says changed (an event may have been lost). */
  follower: CredentialChangeFollower;
  usage: UsageRecorder;
  /** What the use cases work with (tests arrange tenants and keys through it). */
  identity: IdentityContext;
  /** Close pools and connections (after the listeners have drained). */
  close(): Promise<void>;
}

export async function createTokenService(config: TokenServiceConfig, logger: Logger): Promise<TokenService> {
  const db = createDatabase({ connectionString: config.DATABASE_URL, schema: SCHEMA, poolMax: config.DATABASE_POOL_MAX, applicationName: 'token-service', logger });
  const redisOptions = { maxRetriesPerRequest: 2, enableAutoPipelining: true, lazyConnect: false };
  const redis = new Redis(config.REDIS_URL, redisOptions);
  const subscriber = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  for (const client of [redis, subscriber]) client.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis error'));

  const repositories = createRepositories(db);
  const publisher = new RevocationPublisher(redis, logger);
  // SECRET_PEPPER goes here and nowhere else: every digest and comparison uses this one.
  const identity: IdentityContext = { ...repositories, secrets: createClientSecretDigester(config.SECRET_PEPPER), encryption: new KeyEncryption(config.KEY_ENCRYPTION_KEY), publisher };
  const usage = new UsageRecorder(repositories.clientCredentials, logger);
  usage.start();
  const failures = createClientAuthFailureRepository(
    redis,
    {
      perClientIp: config.CLIENT_AUTH_FAILURES_PER_CLIENT_IP,
      perIp: config.CLIENT_AUTH_FAILURES_PER_IP,
      perClient: config.CLIENT_AUTH_FAILURES_PER_CLIENT,
      windowSeconds: config.THROTTLE_WINDOW_SECONDS,
    },
    logger,
  );
  const clientAuth = new ClientAuthentication({ credentials: repositories.clientCredentials, failures, secrets: identity.secrets, usage });
  const signInFailures = createSignInFailureRepository(
    redis,
    {
      perAccountIp: config.SIGN_IN_FAILURES_PER_ACCOUNT,
      perAccount: config.SIGN_IN_FAILURES_PER_ACCOUNT * 10,
      perIp: config.SIGN_IN_FAILURES_PER_IP,
      windowSeconds: config.THROTTLE_WINDOW_SECONDS,
    },
    logger,
  );
  const checkers = new PasswordCheckers(config.SIGN_IN_CONCURRENT_HASHES || defaultPasswordCheckers(availableParallelism()));
  const signIn = { identity, throttle: new SignInThrottle(signInFailures), checkers };
  const metrics = createMetricsRegistry('token-service');
  new Gauge({
    name: 'revocation_publish_pending',
    help: 'Principals whose latest revocation event Redis has not taken yet; republished until it does (alert when above 0 for long)',
    registers: [metrics],
    collect() {
      this.set(publisher.pending);
    },
  });
  const providers = new RealmProviders(
    identity,
    { config, identity, clientAuth, logger, metrics: new TokenMetrics(metrics) },
    { providerBytes: config.REALM_PROVIDER_CACHE_MB * 1024 * 1024, keyBytes: config.REALM_KEY_CACHE_MB * 1024 * 1024 },
  );
  registerCacheMetrics(metrics, { realm_providers: () => providers.stats().providers, realm_keys: () => providers.stats().keys });
  new Counter({
    name: 'realm_provider_builds_total',
    help: "Realm providers built (a realm's first request, after its provider was dropped for memory, after a key rotation)",
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(providers.stats().builds);
    },
  });

  // This replica's cache drops a changed account before the API answers; others hear it on Redis.
  const credentials = repositories.clientCredentials;
  publisher.onLocal((entry) => credentials.forget(entry.tenant, entry.sub));
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === CLIENT_AUTH_FAILURE_CHANNEL) {
      failures.hints?.onAnnouncedFailure(message);
      return;
    }
    if (channel === REVOCATION_CHANNEL) {
      // The same parser as the resource servers': a malformed event is dropped, never half-read.
      const entry = parseRevocationMessage(message);
      if (entry !== undefined) credentials.forget(entry.tenant, entry.sub);
      else logger.warn({ channel }, 'ignored a malformed event');
      return;
    }
    try {
      const parsed: unknown = JSON.parse(message);
      if (channel === KEY_ROTATION_CHANNEL && typeof (parsed as { tenant?: unknown })?.tenant === 'string') providers.invalidate((parsed as { tenant: string }).tenant);
    } catch {
      logger.warn({ channel }, 'ignored a malformed event');
    }
  });
  // After a reconnect events may have been missed: start from Postgres again.
  subscriber.on('ready', () => credentials.forgetAll());
  await subscriber.subscribe(REVOCATION_CHANNEL, KEY_ROTATION_CHANNEL, CLIENT_AUTH_FAILURE_CHANNEL);
  // Failure announcements missed while disconnected: distrust the hints until rebuilt from Redis,
  // once the channel is subscribed again.
  const failureHints = failures.hints;
  if (failureHints) {
    subscriber.on('close', () => failureHints.suspend());
    subscriber.on('ready', () => {
      subscriber.subscribe(CLIENT_AUTH_FAILURE_CHANNEL).then(() => failureHints.resync(), () => failureHints.suspend());
    });
    await failureHints.resync();
  }

  const cleanup = setInterval(() => {
    repositories.oidcPayloads.deleteExpired().catch((err: Error) => logger.warn({ err: { message: err.message } }, 'oidc payload cleanup failed'));
  }, CLEANUP_MS);
  cleanup.unref();
  const pruner = new RevocationPruner(identity, config.ACCESS_TOKEN_TTL, logger);
  pruner.start();
  const follower = new CredentialChangeFollower(identity, config.ACCESS_TOKEN_TTL, logger);
  follower.start();

  const readiness = {
    database: () => db.raw('select 1'),
    redis: () => redis.ping(),
  };
  const publicApp = createPublicApp({
    logger,
    metrics,
    readiness,
    providers,
    identity,
    accessTokenTtl: config.ACCESS_TOKEN_TTL,
    trustProxy: config.TRUST_PROXY,
    interactions: { providers, signIn, csrfKey: config.COOKIE_KEYS, portalUrl: config.PORTAL_URL, logger },
  });
  const internalApp = createInternalApp({
    logger,
    identity,
    credentials: { resourceServerTokens: resourceServerTokensOf(config.RESOURCE_SERVER_TOKENS), accountAdminToken: config.ACCOUNT_ADMIN_TOKEN },
    accessTokenTtl: config.ACCESS_TOKEN_TTL,
  });

  return {
    publicApp,
    internalApp,
    db,
    redis,
    providers,
    publisher,
    pruner,
    follower,
    usage,
    identity,
    async close() {
      clearInterval(cleanup);
      publisher.stop();
      await pruner.stop();
      await follower.stop();
      await usage.stop();
      await checkers.close();
      subscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
      await db.destroy();
    },
  };
}
