import { createDatabase, type Knex } from '@plant/shared/db';
import { createManagementApp, createMetricsRegistry, type HttpApp } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import type { Redis } from 'ioredis';
import type { TokenServiceConfig } from './config.js';
import { SCHEMA } from './migrations/index.js';
import { createRepositories, type Repositories } from './repositories.js';
import {
  createClientSecretDigester,
  type CredentialChangeFollower,
  UsageRecorder,
} from './credentials/index.js';
import { type IdentityContext, createRedisConnections } from './platform/index.js';
import { KeyEncryption } from './signing-keys/index.js';
import { type RevocationPruner, RevocationPublisher } from './revocation/index.js';
import type { SharedSignalsContext } from './signals/index.js';
import type { RealmProviders } from './oidc/index.js';
import { LiveTokenInspector } from './token-inspector.js';
import { internalAppOf, publicAppOf } from './token-service-apps.js';
import {
  createClientAuth,
  createRealmProviders,
  createSignIn,
  startBackgroundJobs,
  startSharedSignals,
} from './token-service-parts.js';
import { subscribeToChanges } from './change-subscriptions.js';
import { registerServiceGauges } from './service-gauges.js';

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
  // Before the providers: token exchange verifies subject tokens with it.
  const inspector = new LiveTokenInspector({ config, logger, metrics });
  const { providers, signInStarts } = createRealmProviders(config, {
    identity,
    clientAuth: client.clientAuth,
    tokenInspector: inspector,
    redis,
    metrics,
    logger,
  });
  registerServiceGauges(metrics, publisher, providers, repositories.signingKeys);
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
