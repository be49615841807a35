import type { HttpApp } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import { createSourceBudget } from '@plant/shared/security';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { exchangeAudiencesOf, resourceServerTokensOf, type TokenServiceConfig } from './config.js';
import type { ClientAuthFailureRepository } from './client-auth/index.js';
import { SecretScanningKeys } from './leak-reports/index.js';
import { ResourceServerAuthentication } from './grants/index.js';
import type { IdentityContext } from './platform/index.js';
import type { SharedSignalsContext } from './signals/index.js';
import type { RealmProviders } from './oidc/index.js';
import type { LiveTokenInspector } from './token-inspector.js';
import type { createSignIn } from './token-service-parts.js';
import { keyChangeAnnouncer } from './change-subscriptions.js';
import { createInternalApp } from './internal-app.js';
import { createPublicApp } from './public-app.js';

/** The public listener's app: the realms, sign-in, invitations, leak reports, Shared Signals, introspection. */
export function publicAppOf(
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
export function internalAppOf(
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
    exchangeAudiences: exchangeAudiencesOf(config),
    announceKeyChange: keyChangeAnnouncer(redis, providers, logger),
  });
}
