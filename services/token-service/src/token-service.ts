import { availableParallelism } from 'node:os';
import { createRedisReplayStore } from '@plant/resource-auth';
import { createDatabase, type Knex } from '@plant/shared/db';
import { createManagementApp, createMetricsRegistry, type HttpApp } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import { createSourceBudget } from '@plant/shared/security';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { relyingPartyOf, resourceServerTokensOf, type TokenServiceConfig } from './config.js';
import { createAssertionReplayStore } from './client-auth/assertion-replay-repository.js';
import {
  type ClientAuthFailureRepository,
  createClientAuthFailureRepository,
} from './client-auth/client-auth-failure-repository.js';
import { createFederatedIssuerKeys } from './client-auth/federated-issuer-keys.js';
import { createGrantQuotaCounter } from './quotas/grant-quota-counter.js';
import { SecretScanningKeys } from './leak-reports/secret-scanning-keys.js';
import { SCHEMA } from './migrations/index.js';
import { createRepositories, type Repositories } from './repositories.js';
import { createSignInFailureRepository } from './sign-in/sign-in-failure-repository.js';
import { createWebAuthnChallengeRepository } from './second-factors/webauthn-challenge-repository.js';
import { ClientAuthentication } from './client-auth/authenticate-client.js';
import { ClientAssertionVerifier } from './client-auth/client-assertions.js';
import { ResourceServerAuthentication } from './grants/authenticate-resource-server.js';
import { createClientSecretDigester } from './credentials/client-secrets.js';
import type { IdentityContext } from './platform/identity-context.js';
import { KeyEncryption } from './signing-keys/key-encryption.js';
import { defaultPasswordCheckers, PasswordCheckers } from './sign-in/password-checkers.js';
import { CredentialChangeFollower } from './credentials/follow-credential-changes.js';
import { GrantQuotas } from './quotas/grant-quotas.js';
import { RevocationPruner } from './revocation/revocation-feed.js';
import { RevocationPublisher } from './revocation/revocation-publisher.js';
import { SignInThrottle } from './sign-in/sign-in-throttle.js';
import { UsageRecorder } from './credentials/usage-recorder.js';
import { SignalNotifications } from './signals/signal-notifications.js';
import { SecurityEventSigner } from './signals/security-event-tokens.js';
import type { SharedSignalsContext } from './signals/shared-signals.js';
import { SignalDelivery } from './signals/signal-delivery.js';
import { createInternalApp } from './platform/internal-app.js';
import { createPublicApp } from './platform/public-app.js';
import { keyChangeAnnouncer, subscribeToChanges } from './platform/change-subscriptions.js';
import { createRedisConnections, type RedisConnections } from './platform/redis-connections.js';
import { startExpiredPayloadSweep } from './oidc/expired-payload-sweep.js';
import { INTERACTION_TTL_SECONDS } from './oidc/realm-configuration.js';
import { RealmProviders } from './oidc/realm-providers.js';
import { registerServiceGauges } from './platform/service-gauges.js';
import { TokenMetrics } from './grants/token-metrics.js';
import { LiveTokenInspector } from './token-inspector.js';

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

/**
 * The composition root: every part built from the configuration, wired, started in order
 * (Postgres and Redis, the identity context, client authentication, sign-in, the realms'
 * providers, the change channels, the background jobs, Shared Signals, then the listeners'
 * apps), and closed in the reverse order by `close()`.
 */
export async function createTokenService(
  config: TokenServiceConfig,
  logger: Logger,
): Promise<TokenService> {
  const db = createTokenDatabase(config, logger);
  const connections = createRedisConnections(config, logger);
  const { redis, subscriber } = connections;
  const repositories = createRepositories(db);
  const publisher = new RevocationPublisher(redis, logger);
  const identity = createIdentityContext(config, repositories, publisher);
  const usage = new UsageRecorder(repositories.credentialUsage, logger);
  usage.start();
  const metrics = createMetricsRegistry('token-service');
  const client = createClientAuth(config, { identity, usage, connections, metrics, logger });
  const signIn = createSignIn(config, identity, redis, logger);
  const { providers, signInStarts } = createRealmProviders(config, {
    identity,
    clientAuth: client.clientAuth,
    redis,
    metrics,
    logger,
  });
  registerServiceGauges(metrics, publisher, providers, repositories.signingKeys);
  const inspector = new LiveTokenInspector({ config, logger, metrics });
  const credentials = repositories.clientCredentials;
  const failures = client.failures;
  await subscribeToChanges({ subscriber, publisher, credentials, failures, providers, logger });
  const jobs = startBackgroundJobs(config, repositories, identity, logger);
  const shared = await startSharedSignals(config, { db, identity, inspector, metrics, logger });
  const signals = shared.signals;
  const publicApp = publicAppOf(config, {
    ...{ identity, providers, signals, signIn, signInStarts, failures, inspector },
    ...{ redis, metrics, logger },
  });
  const internalApp = internalAppOf(config, { identity, providers, inspector, redis, logger });
  // Its own port, not the internal API's: that one admits the resource servers and wants a
  // credential on every call; the kubelet and Prometheus have neither (docs/deploy.md).
  // Not gated on introspection's revocation snapshot: until it loads, introspection asks Postgres
  // per principal (fail closed), and grants must not wait for it.
  const managementApp = createManagementApp({
    logger,
    metrics,
    readiness: { database: () => db.raw('select 1'), redis: () => redis.ping() },
  });

  const { pruner, follower } = jobs;
  return {
    ...{ publicApp, internalApp, managementApp, db, redis, providers, publisher },
    ...{ pruner, follower, usage, identity, signals },
    startIntrospection: (internalUrl) => inspector.start(internalUrl),
    async close() {
      shared.delivery.stop();
      await shared.notifications.stop();
      await inspector.stop();
      clearInterval(jobs.cleanup);
      publisher.stop();
      await pruner.stop();
      await follower.stop();
      await usage.stop();
      await signIn.checkers.close();
      subscriber.disconnect();
      await client.assertionReplay.close();
      await redis.quit().catch(() => redis.disconnect());
      await connections.quotaRedis.quit().catch(() => connections.quotaRedis.disconnect());
      await db.destroy();
    },
  };
}

function createTokenDatabase(config: TokenServiceConfig, logger: Logger): Knex {
  return createDatabase({
    connectionString: config.DATABASE_URL,
    schema: SCHEMA,
    poolMax: config.DATABASE_POOL_MAX,
    applicationName: 'token-service',
    logger,
  });
}

/** What the use cases work with. SECRET_PEPPER goes here and nowhere else: every digest and comparison uses this one. */
function createIdentityContext(
  config: TokenServiceConfig,
  repositories: Repositories,
  publisher: RevocationPublisher,
): IdentityContext {
  const trustPolicy = {
    allowHttp: config.FEDERATION_ALLOW_HTTP_ISSUERS,
    allowPrivate: config.FEDERATION_ALLOW_PRIVATE_ISSUERS,
    issuersPerTenant: config.FEDERATION_MAX_ISSUERS_PER_TENANT,
    authUrl: config.AUTH_URL,
  };
  return {
    ...repositories,
    secrets: createClientSecretDigester(config.SECRET_PEPPER),
    encryption: new KeyEncryption(config.KEY_ENCRYPTION_KEY),
    publisher,
    trustPolicy,
  };
}

/** Client authentication at the token endpoint: failure counters, assertions, grant quotas. */
function createClientAuth(
  config: TokenServiceConfig,
  deps: {
    identity: IdentityContext;
    usage: UsageRecorder;
    connections: RedisConnections;
    metrics: Registry;
    logger: Logger;
  },
) {
  const { identity, usage, connections, metrics, logger } = deps;
  const failures = createClientAuthFailureRepository(
    connections.redis,
    {
      perClientIp: config.CLIENT_AUTH_FAILURES_PER_CLIENT_IP,
      perIp: config.CLIENT_AUTH_FAILURES_PER_IP,
      perClient: config.CLIENT_AUTH_FAILURES_PER_CLIENT,
      windowSeconds: config.THROTTLE_WINDOW_SECONDS,
    },
    logger,
  );
  const issuerKeys = createFederatedIssuerKeys(
    { ...identity.trustPolicy, timeoutMs: config.FEDERATION_FETCH_TIMEOUT_MS },
    { refetchMinMs: config.FEDERATION_JWKS_REFETCH_SECONDS * 1000 },
    (issuer, reason) =>
      logger.warn(
        { issuer, reason },
        "trusted issuer's keys unavailable; its workloads' tokens are refused",
      ),
  );
  const assertionReplay = createAssertionReplayStore(connections.target, logger);
  const assertions = new ClientAssertionVerifier({
    replay: assertionReplay.repository,
    issuerKeys,
    logger,
    metrics,
  });
  const quotas = new GrantQuotas({
    counter: createGrantQuotaCounter(connections.quotaRedis),
    recordEvent: (event) => identity.credentialHygiene.recordEvent(event),
    metrics,
    logger,
  });
  const clientAuth = new ClientAuthentication({
    credentials: identity.clientCredentials,
    failures,
    secrets: identity.secrets,
    assertions,
    usage,
    quotas,
  });
  return { clientAuth, failures, assertionReplay };
}

/** Sign-in's pages: password, codes and passkeys, each throttled; invitations' acceptance. */
function createSignIn(
  config: TokenServiceConfig,
  identity: IdentityContext,
  redis: Redis,
  logger: Logger,
) {
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
  return { checkers, signIn, factors, passkeys };
}

/** The realms' oidc-provider instances, and the budget of sign-ins they start. */
function createRealmProviders(
  config: TokenServiceConfig,
  deps: {
    identity: IdentityContext;
    clientAuth: ClientAuthentication;
    redis: Redis;
    metrics: Registry;
    logger: Logger;
  },
) {
  const { identity, clientAuth, redis, metrics, logger } = deps;
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
  return { providers, signInStarts };
}

/** The expired-row sweep, the revocation pruner and the credential change follower, started. */
function startBackgroundJobs(
  config: TokenServiceConfig,
  repositories: Repositories,
  identity: IdentityContext,
  logger: Logger,
) {
  const cleanup = startExpiredPayloadSweep(repositories.oidcPayloads, logger);
  const pruner = new RevocationPruner(identity, config.ACCESS_TOKEN_TTL, logger);
  pruner.start();
  const follower = new CredentialChangeFollower(identity, config.ACCESS_TOKEN_TTL, logger);
  follower.start();
  return { cleanup, pruner, follower };
}

/** The Shared Signals transmitters: the signer, delivery (push, long polls) and its wake-ups, started. */
async function startSharedSignals(
  config: TokenServiceConfig,
  deps: {
    db: Knex;
    identity: IdentityContext;
    inspector: LiveTokenInspector;
    metrics: Registry;
    logger: Logger;
  },
) {
  const { db, identity, inspector, metrics, logger } = deps;
  const signer = new SecurityEventSigner(identity, config.AUTH_URL);
  const delivery = new SignalDelivery({
    streams: identity.signalStreams,
    signer,
    encryption: identity.encryption,
    policy: { ...identity.trustPolicy, timeoutMs: config.SSF_PUSH_TIMEOUT_MS },
    maxWaiters: config.SSF_POLL_MAX_WAITERS,
    perTenant: config.SSF_PUSH_CONCURRENCY_PER_TENANT,
    logger,
    metrics,
  });
  const signals: SharedSignalsContext = {
    streams: identity.signalStreams,
    inspector,
    encryption: identity.encryption,
    signer,
    delivery,
    realmExists: async (tenant) => (await identity.realms.find(tenant)) !== undefined,
    authUrl: config.AUTH_URL,
    pushPolicy: identity.trustPolicy,
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
  return { signals, delivery, notifications };
}

/** The public listener's app: the realms, sign-in, invitations, leak reports, Shared Signals, introspection. */
function publicAppOf(
  config: TokenServiceConfig,
  deps: {
    identity: IdentityContext;
    providers: RealmProviders;
    signals: SharedSignalsContext;
    signIn: ReturnType<typeof createSignIn>;
    signInStarts: ReturnType<typeof createSourceBudget>;
    failures: ClientAuthFailureRepository;
    inspector: LiveTokenInspector;
    redis: Redis;
    metrics: Registry;
    logger: Logger;
  },
): HttpApp {
  const { identity, providers, signals, signIn, signInStarts, failures, inspector } = deps;
  const { redis, metrics, logger } = deps;
  return createPublicApp({
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
      checkers: signIn.checkers,
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
      signIn: signIn.signIn,
      factors: signIn.factors,
      passkeys: signIn.passkeys,
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
}

/** The internal API's app. */
function internalAppOf(
  config: TokenServiceConfig,
  deps: {
    identity: IdentityContext;
    providers: RealmProviders;
    inspector: LiveTokenInspector;
    redis: Redis;
    logger: Logger;
  },
): HttpApp {
  const { identity, providers, inspector, redis, logger } = deps;
  return createInternalApp({
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
    announceKeyChange: keyChangeAnnouncer(redis, providers, logger),
  });
}
