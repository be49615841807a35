import { availableParallelism } from 'node:os';
import { createRedisReplayStore } from '@plant/resource-auth';
import { createDatabase, type Knex } from '@plant/shared/db';
import { createManagementApp, createMetricsRegistry, type HttpApp } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import { createRedisClient, redisTargetOf } from '@plant/shared/redis';
import { createSourceBudget } from '@plant/shared/security';
import { parseRevocationMessage, REVOCATION_CHANNEL } from '@plant/shared/token-service-client';
import { withTimeout } from '@plant/shared/util';
import type { Redis } from 'ioredis';
import { relyingPartyOf, resourceServerTokensOf, type TokenServiceConfig } from './config.js';
import {
  createAssertionReplayStore,
  CLIENT_AUTH_FAILURE_CHANNEL,
  createClientAuthFailureRepository,
  createFederatedIssuerKeys,
  ClientAuthentication,
  ClientAssertionVerifier,
} from './client-auth/index.js';
import { createGrantQuotaCounter, GrantQuotas } from './quotas/index.js';
import { SecretScanningKeys } from './leak-reports/index.js';
import { SCHEMA } from './migrations/index.js';
import { createRepositories } from './repositories.js';
import {
  createSignInFailureRepository,
  defaultPasswordCheckers,
  PasswordCheckers,
  SignInThrottle,
} from './sign-in/index.js';
import { createWebAuthnChallengeRepository } from './second-factors/index.js';
import { ResourceServerAuthentication, TokenMetrics } from './grants/index.js';
import {
  createClientSecretDigester,
  CredentialChangeFollower,
  UsageRecorder,
} from './credentials/index.js';
import {
  type IdentityContext,
  createInternalApp,
  createPublicApp,
  registerServiceGauges,
} from './platform/index.js';
import { KeyEncryption } from './signing-keys/index.js';
import { KEY_ROTATION_CHANNEL, keyChangeMessage, parseKeyChangeMessage } from './realms/index.js';
import { RevocationPruner, REPUBLISH_MAX_MS, RevocationPublisher } from './revocation/index.js';
import {
  SignalNotifications,
  SecurityEventSigner,
  type SharedSignalsContext,
  SignalDelivery,
} from './signals/index.js';
import { INTERACTION_TTL_SECONDS, RealmProviders } from './oidc/index.js';
import { LiveTokenInspector } from './token-inspector.js';

/**
 * Expired oidc-provider rows (interactions, codes, sessions) are deleted this often, at most
 * SWEEP_BATCH a pass (SWEEP_BATCH / SWEEP_MS rows a second per replica, far above what the
 * sign-in start budgets let anyone create): a row is gone within seconds of expiring, never
 * left for a long sweep that would churn the table at once. Reads ignore expired rows anyway.
 */
const SWEEP_MS = 2_000;
const SWEEP_BATCH = 2_000;
/** How long a key change's answer waits for Redis to take its announcement (replicas re-check every 30 s anyway). */
const ANNOUNCE_TIMEOUT_MS = 1_000;

export interface TokenService {
  /** The public listener: the realms' endpoints and sign-in pages. */
  publicApp: HttpApp;
  /** The internal API's listener. */
  internalApp: HttpApp;
  /** The management listener: /healthz, /readyz (Postgres, Redis), /metrics. */
  managementApp: HttpApp;
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
  /** The Shared Signals transmitters: delivery (push, long polls) and what the endpoints use. */
  signals: SharedSignalsContext;
  /** Starts token introspection's verification against the internal API once it listens at `internalUrl`. */
  startIntrospection(internalUrl: string): Promise<void>;
  /** Close pools and connections (after the listeners have drained). */
  close(): Promise<void>;
}

export async function createTokenService(
  config: TokenServiceConfig,
  logger: Logger,
): Promise<TokenService> {
  const db = createDatabase({
    connectionString: config.DATABASE_URL,
    schema: SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
    applicationName: 'token-service',
    logger,
  });
  // Reconnect attempts at most half a second apart (ioredis' default backs off to 2 s): after a
  // failover the publisher's kept events go out, and the subscription is back, that much sooner.
  const retryStrategy = (attempt: number) => Math.min(50 * attempt, 500);
  const redisOptions = {
    maxRetriesPerRequest: 2,
    enableAutoPipelining: true,
    lazyConnect: false,
    retryStrategy,
  };
  const redisTarget = redisTargetOf(config);
  const redis = createRedisClient(redisTarget, redisOptions);
  // Grant quotas count on every grant of a limited account, on a connection of their own
  // without auto-pipelining: their increments are already batched per account
  // (`createGrantQuotaCounter`), and measured on the shared auto-pipelined client the grant of
  // an account with an enforced quota ran at 0.86–0.88× the grant without, against 0.96× here
  // (`pnpm bench -- --only=quota --rounds=12`, twice each; docs/performance.md).
  const quotaRedis = createRedisClient(redisTarget, {
    ...redisOptions,
    enableAutoPipelining: false,
  });
  // autoResubscribe off: ioredis' own resubscription after a reconnect drops its promise, so a
  // SUBSCRIBE refused or cut short (the client closed before Redis confirmed it) was an
  // unhandled rejection, which ends a Node process (a test's teardown right after a Redis
  // restart failed with "Connection is closed."). The 'ready' listeners below subscribe every
  // channel themselves and handle the outcome.
  const subscriber = createRedisClient(redisTarget, {
    maxRetriesPerRequest: null,
    retryStrategy,
    autoResubscribe: false,
  });
  for (const client of [redis, quotaRedis, subscriber])
    client.on('error', (err: Error) =>
      logger.warn({ err: { message: err.message } }, 'redis error'),
    );

  const repositories = createRepositories(db);
  const publisher = new RevocationPublisher(redis, logger);
  // SECRET_PEPPER goes here and nowhere else: every digest and comparison uses this one.
  const trustPolicy = {
    allowHttp: config.FEDERATION_ALLOW_HTTP_ISSUERS,
    allowPrivate: config.FEDERATION_ALLOW_PRIVATE_ISSUERS,
    issuersPerTenant: config.FEDERATION_MAX_ISSUERS_PER_TENANT,
    authUrl: config.AUTH_URL,
  };
  const identity: IdentityContext = {
    ...repositories,
    secrets: createClientSecretDigester(config.SECRET_PEPPER),
    encryption: new KeyEncryption(config.KEY_ENCRYPTION_KEY),
    publisher,
    trustPolicy,
  };
  const usage = new UsageRecorder(repositories.credentialUsage, logger);
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
  const issuerKeys = createFederatedIssuerKeys(
    { ...trustPolicy, timeoutMs: config.FEDERATION_FETCH_TIMEOUT_MS },
    { refetchMinMs: config.FEDERATION_JWKS_REFETCH_SECONDS * 1000 },
    (issuer, reason) =>
      logger.warn(
        { issuer, reason },
        "trusted issuer's keys unavailable; its workloads' tokens are refused",
      ),
  );
  const assertionReplay = createAssertionReplayStore(redisTarget, logger);
  const metrics = createMetricsRegistry('token-service');
  const assertions = new ClientAssertionVerifier({
    replay: assertionReplay.repository,
    issuerKeys,
    logger,
    metrics,
  });
  const quotas = new GrantQuotas({
    counter: createGrantQuotaCounter(quotaRedis),
    recordEvent: (event) => repositories.credentialHygiene.recordEvent(event),
    metrics,
    logger,
  });
  const clientAuth = new ClientAuthentication({
    credentials: repositories.clientCredentials,
    failures,
    secrets: identity.secrets,
    assertions,
    usage,
    quotas,
  });
  const signInLimits = {
    perAccountIp: config.SIGN_IN_FAILURES_PER_ACCOUNT,
    perAccount: config.SIGN_IN_FAILURES_PER_ACCOUNT * 10,
    perIp: config.SIGN_IN_FAILURES_PER_IP,
    windowSeconds: config.THROTTLE_WINDOW_SECONDS,
  };
  const signInFailures = createSignInFailureRepository(redis, signInLimits, logger);
  // Codes and passkeys: the password's limits, in counters of their own (a family apart, so
  // a code's failures never spend the password's budget nor the other way round).
  const factorThrottle = new SignInThrottle(
    createSignInFailureRepository(redis, signInLimits, logger, 'factor-fail'),
    identity.secrets,
  );
  const factors = { identity, throttle: factorThrottle };
  const passkeys = {
    identity,
    throttle: factorThrottle,
    challenges: createWebAuthnChallengeRepository(redis),
    rp: relyingPartyOf(config),
  };
  const checkers = new PasswordCheckers(
    config.SIGN_IN_CONCURRENT_HASHES || defaultPasswordCheckers(availableParallelism()),
  );
  const signIn = {
    identity,
    throttle: new SignInThrottle(signInFailures, identity.secrets),
    checkers,
  };
  // DPoP proof ids at the token endpoint: one atomic claim in Redis, shared by every replica.
  const dpopReplay = createRedisReplayStore({ redis, logger });
  // Sign-ins started (interaction rows) per source and in total, over the interaction's lifetime.
  const signInStarts = createSourceBudget(
    redis,
    'signin-start',
    {
      perSource: config.SIGN_IN_STARTS_PER_IP,
      total: config.SIGN_IN_STARTS_TOTAL,
      windowSeconds: INTERACTION_TTL_SECONDS,
    },
    logger,
  );
  const providers = new RealmProviders(
    identity,
    {
      config,
      identity,
      clientAuth,
      replay: dpopReplay,
      logger,
      metrics: new TokenMetrics(metrics),
      signInStarts,
    },
    {
      providerBytes: config.REALM_PROVIDER_CACHE_MB * 1024 * 1024,
      keyBytes: config.REALM_KEY_CACHE_MB * 1024 * 1024,
    },
  );
  registerServiceGauges(metrics, publisher, providers, repositories.signingKeys);
  const inspector = new LiveTokenInspector({ config, logger, metrics });

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
    const tenant = channel === KEY_ROTATION_CHANNEL ? parseKeyChangeMessage(message) : undefined;
    if (tenant !== undefined) providers.invalidate(tenant);
    else logger.warn({ channel }, 'ignored a malformed event');
  });
  // Without the subscription change events are missed: credentials come from Postgres on every
  // grant until it is confirmed again (a Redis restart or failover), and a while longer: another
  // replica's publish that failed in the same outage goes out once its own connection is back
  // (its republish comes at most REPUBLISH_MAX_MS apart). Then the cache starts anew.
  let outages = 0;
  subscriber.on('close', () => {
    outages += 1;
    credentials.distrust();
  });
  subscriber.on('ready', () => {
    const outage = outages;
    subscriber.subscribe(REVOCATION_CHANNEL, KEY_ROTATION_CHANNEL).then(
      () =>
        setTimeout(() => outage === outages && credentials.trust(), 2 * REPUBLISH_MAX_MS).unref(),
      () => undefined,
    );
  });
  await subscriber.subscribe(REVOCATION_CHANNEL, KEY_ROTATION_CHANNEL, CLIENT_AUTH_FAILURE_CHANNEL);
  // Failure announcements missed while disconnected: distrust the hints until rebuilt from Redis,
  // once the channel is subscribed again.
  const failureHints = failures.hints;
  if (failureHints) {
    subscriber.on('close', () => failureHints.suspend());
    subscriber.on('ready', () => {
      subscriber.subscribe(CLIENT_AUTH_FAILURE_CHANNEL).then(
        () => failureHints.resync(),
        () => failureHints.suspend(),
      );
    });
    // Not awaited: until the hints are rebuilt (a SCAN of every counter) each grant asks Redis,
    // which is correct, only slower; a start must not wait for a scan that grows with the keys.
    void failureHints.resync();
  }

  let sweeping = false;
  const cleanup = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    repositories.oidcPayloads
      .deleteExpired(SWEEP_BATCH)
      .catch((err: Error) =>
        logger.warn({ err: { message: err.message } }, 'oidc payload cleanup failed'),
      )
      .finally(() => {
        sweeping = false;
      });
  }, SWEEP_MS);
  cleanup.unref();
  const pruner = new RevocationPruner(identity, config.ACCESS_TOKEN_TTL, logger);
  pruner.start();
  const follower = new CredentialChangeFollower(identity, config.ACCESS_TOKEN_TTL, logger);
  follower.start();

  const signer = new SecurityEventSigner(identity, config.AUTH_URL);
  const delivery = new SignalDelivery({
    streams: repositories.signalStreams,
    signer,
    encryption: identity.encryption,
    policy: { ...trustPolicy, timeoutMs: config.SSF_PUSH_TIMEOUT_MS },
    maxWaiters: config.SSF_POLL_MAX_WAITERS,
    perTenant: config.SSF_PUSH_CONCURRENCY_PER_TENANT,
    logger,
    metrics,
  });
  const signals: SharedSignalsContext = {
    streams: repositories.signalStreams,
    inspector,
    encryption: identity.encryption,
    signer,
    delivery,
    realmExists: async (tenant) => (await repositories.realms.find(tenant)) !== undefined,
    authUrl: config.AUTH_URL,
    pushPolicy: trustPolicy,
    limits: {
      backlog: config.SSF_STREAM_BACKLOG,
      streamsPerTenant: config.SSF_STREAMS_PER_TENANT,
      pollWaitSeconds: config.SSF_POLL_WAIT_SECONDS,
      minVerificationIntervalSeconds: config.SSF_MIN_VERIFICATION_INTERVAL_SECONDS,
    },
  };
  const notifications = new SignalNotifications(
    db,
    { onStream: (id) => delivery.onStream(id), onResume: () => delivery.onResume() },
    logger,
  );
  await notifications.start();
  delivery.start();

  const publicApp = createPublicApp({
    signals,
    logger,
    metrics,
    providers,
    identity,
    secretScanning: {
      identity,
      keys:
        config.SECRET_SCANNING_GITHUB_KEYS === ''
          ? undefined
          : new SecretScanningKeys({
              source: config.SECRET_SCANNING_GITHUB_KEYS,
              refetchMs: config.SECRET_SCANNING_KEYS_REFETCH_SECONDS * 1000,
            }),
    },
    accessTokenTtl: config.ACCESS_TOKEN_TTL,
    trustProxy: config.TRUST_PROXY,
    signInStarts,
    invitationPage: {
      identity,
      checkers,
      // Each acceptance tried may hash a password: a source gets a few per window, as sign-ins do.
      budget: createSourceBudget(
        redis,
        'invitation-accept',
        {
          perSource: config.INVITATION_ACCEPTS_PER_IP,
          total: config.INVITATION_ACCEPTS_TOTAL,
          windowSeconds: 600,
        },
        logger,
      ),
      csrfKey: config.COOKIE_KEYS,
      portalUrl: config.PORTAL_URL,
    },
    interactions: {
      providers,
      signIn,
      factors,
      passkeys,
      csrfKey: config.COOKIE_KEYS,
      portalUrl: config.PORTAL_URL,
      logger,
    },
    // Resource servers introspect with the read-only credential they hold for the internal API.
    introspection: {
      authenticator: new ResourceServerAuthentication(
        [...resourceServerTokensOf(config.RESOURCE_SERVER_TOKENS), config.ACCOUNT_ADMIN_TOKEN],
        failures,
      ),
      inspector,
    },
  });
  const internalApp = createInternalApp({
    logger,
    identity,
    // The introspection verifier is this process's own resource server, with a credential of its own.
    credentials: {
      resourceServerTokens: [
        ...resourceServerTokensOf(config.RESOURCE_SERVER_TOKENS),
        inspector.credential,
      ],
      accountAdminToken: config.ACCOUNT_ADMIN_TOKEN,
    },
    accessTokenTtl: config.ACCESS_TOKEN_TTL,
    invitations: { authUrl: config.AUTH_URL, ttlSeconds: config.INVITATION_TTL_SECONDS },
    async announceKeyChange(tenant) {
      // This replica at once; the others (and this one again, harmlessly) when they hear it.
      providers.invalidate(tenant);
      await withTimeout(
        redis.publish(KEY_ROTATION_CHANNEL, keyChangeMessage(tenant)),
        ANNOUNCE_TIMEOUT_MS,
        'key change announcement',
      ).catch((err: Error) =>
        logger.warn(
          { tenant, err: { message: err.message } },
          'could not announce a key change on Redis; other replicas pick it up at their next realm re-check',
        ),
      );
    },
  });
  // Its own port, not the internal API's: that one admits the resource servers and wants a
  // credential on every call; the kubelet and Prometheus have neither (docs/deploy.md).
  // Not gated on introspection's revocation snapshot: until it loads, introspection asks Postgres
  // per principal (fail closed), and grants must not wait for it.
  const managementApp = createManagementApp({
    logger,
    metrics,
    readiness: { database: () => db.raw('select 1'), redis: () => redis.ping() },
  });

  return {
    publicApp,
    internalApp,
    managementApp,
    db,
    redis,
    providers,
    publisher,
    pruner,
    follower,
    usage,
    identity,
    signals,
    startIntrospection: (internalUrl) => inspector.start(internalUrl),
    async close() {
      delivery.stop();
      await notifications.stop();
      await inspector.stop();
      clearInterval(cleanup);
      publisher.stop();
      await pruner.stop();
      await follower.stop();
      await usage.stop();
      await checkers.close();
      subscriber.disconnect();
      await assertionReplay.close();
      await redis.quit().catch(() => redis.disconnect());
      await quotaRedis.quit().catch(() => quotaRedis.disconnect());
      await db.destroy();
    },
  };
}
