/** The parts the composition root (token-service.ts) wires, each built from the configuration. */
import { availableParallelism } from 'node:os';
import { createRedisReplayStore } from '@plant/resource-auth';
import type { Knex } from '@plant/shared/db';
import type { Logger } from '@plant/shared/logging';
import { createSourceBudget } from '@plant/shared/security';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { relyingPartyOf, type TokenServiceConfig } from './config.js';
import {
  createAssertionReplayStore,
  createClientAuthFailureRepository,
  createFederatedIssuerKeys,
  ClientAuthentication,
  ClientAssertionVerifier,
} from './client-auth/index.js';
import { createGrantQuotaCounter, GrantQuotas } from './quotas/index.js';
import type { Repositories } from './repositories.js';
import { defaultPasswordCheckers, PasswordCheckers } from './passwords/index.js';
import { createSignInFailureRepository, SignInThrottle, signInRules } from './sign-in/index.js';
import { createWebAuthnChallengeRepository } from './second-factors/index.js';
import type { IdentityContext, RedisConnections } from './platform/index.js';
import { CredentialChangeFollower, type UsageRecorder } from './credentials/index.js';
import { RevocationPruner } from './revocation/index.js';
import {
  SignalNotifications,
  SecurityEventTokenSigner,
  type SharedSignalsContext,
  SignalDelivery,
} from './signals/index.js';
import {
  DEVICE_CODE_TTL_SECONDS,
  INTERACTION_TTL_SECONDS,
  RealmProviders,
  startExpiredPayloadSweep,
} from './oidc/index.js';
import {
  createGrantEngine,
  serveServiceAccountClients,
  TokenMetrics,
  type TokenInspector,
} from './grants/index.js';
import type { LiveTokenInspector } from './token-inspector.js';

/** Client authentication at the token endpoint: failure counters, assertions, grant quotas. */
export function createClientAuth(
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
export function createSignIn(
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
export function createRealmProviders(
  config: TokenServiceConfig,
  deps: {
    identity: IdentityContext;
    clientAuth: ClientAuthentication;
    tokenInspector: TokenInspector;
    redis: Redis;
    metrics: Registry;
    logger: Logger;
  },
) {
  const { identity, clientAuth, tokenInspector, redis, metrics, logger } = deps;
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
  // Device codes stored, and user codes tried, per source and in total, over a code's lifetime.
  const deviceFlow = {
    deviceCodes: createSourceBudget(
      redis,
      'device-code',
      {
        perSource: config.DEVICE_CODES_PER_IP,
        total: config.DEVICE_CODES_TOTAL,
        windowSeconds: DEVICE_CODE_TTL_SECONDS,
      },
      logger,
    ),
    codeEntries: createSourceBudget(
      redis,
      'device-code-entry',
      {
        perSource: config.DEVICE_CODE_ENTRIES_PER_IP,
        total: config.DEVICE_CODE_ENTRIES_TOTAL,
        windowSeconds: DEVICE_CODE_TTL_SECONDS,
      },
      logger,
    ),
  };
  const providerDeps = {
    config,
    identity,
    clientAuth,
    replay: dpopReplay,
    signInRules,
    tokenInspector,
    logger,
    metrics: new TokenMetrics(metrics),
    serveClients: serveServiceAccountClients,
    signInStarts,
    deviceFlow,
  };
  const providers = new RealmProviders(
    identity,
    providerDeps,
    {
      providerBytes: config.REALM_PROVIDER_CACHE_MB * 1024 * 1024,
      keyBytes: config.REALM_KEY_CACHE_MB * 1024 * 1024,
    },
    createGrantEngine(providerDeps),
  );
  return { providers, signInStarts };
}

/** The expired-row sweep, the revocation pruner and the credential change follower, started. */
export function startBackgroundJobs(
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
export async function startSharedSignals(
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
  const signer = new SecurityEventTokenSigner(identity, config.AUTH_URL);
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
