import { createHttpApp, type HttpApp, type TrustProxy } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import { stylesheetRoute } from '@plant/shared/page-look';
import type { SourceBudget } from '@plant/shared/security';
import type { IdentityContext } from './platform/index.js';
import type { Registry } from 'prom-client';
import { SIGN_IN_ASSETS, type RealmProviders, realmMount, tokenRoute } from './oidc/index.js';
import { interactionRoutes, type InteractionDeps } from './sign-in/index.js';
import { invitationRoutes, type InvitationPageDeps } from './people/index.js';
import { introspectionRoute, type IntrospectionDeps } from './grants/index.js';
import { publishedKeysRoute } from './signing-keys/index.js';
import { signalRoutes, type SharedSignalsContext } from './signals/index.js';
import { secretScanningRoute, type SecretScanningDeps } from './leak-reports/index.js';

export interface PublicAppDeps {
  logger: Logger;
  /** Where request metrics go; the management port (`createManagementApp`) exposes them. */
  metrics: Registry;
  providers: RealmProviders;
  identity: IdentityContext;
  accessTokenTtl: number;
  trustProxy: TrustProxy;
  interactions: InteractionDeps;
  /** The invitation page of each realm. */
  invitationPage: InvitationPageDeps;
  /** Sign-ins started per source: a source already refused is answered before its realm's provider. */
  signInStarts: SourceBudget;
  /** Token introspection (RFC 7662): who may ask, and what verifies. */
  introspection: Omit<IntrospectionDeps, 'trustProxy'>;
  /** The realms' Shared Signals transmitters. */
  signals: SharedSignalsContext;
  /** Leak reports from GitHub secret scanning (one endpoint for every realm). */
  secretScanning: SecretScanningDeps;
}

/** The public listener: the realms (`/realms/<tenant>/...`) and the sign-in pages' stylesheet (`/realms/_assets/...`); probes and metrics are the management port's. */
export function createPublicApp(deps: PublicAppDeps): HttpApp {
  return createHttpApp({
    logger: deps.logger,
    metrics: deps.metrics,
    // No request context in this process (grants would pay for it in every promise): lines
    // logged inside a grant take the id from oidc-provider's own context (`grantRequestId`).
    requestContext: false,
    trustProxy: deps.trustProxy,
    // JWKS and sign-in pages keep their validators.
    etag: true,
    routes: [
      tokenRoute(deps.providers),
      secretScanningRoute(deps.secretScanning, deps.metrics),
      // Before the realm mount, which would hand the path to oidc-provider (its introspection is off).
      introspectionRoute({ ...deps.introspection, trustProxy: deps.trustProxy }),
      publishedKeysRoute(
        deps.identity,
        deps.accessTokenTtl,
        '/realms/:tenant/protocol/openid-connect/certs',
      ),
      // Before the realm mount too: oidc-provider would answer these paths 404 in its own shape.
      ...signalRoutes(deps.signals),
      ...interactionRoutes(deps.interactions),
      ...invitationRoutes(deps.invitationPage),
      // The portal's stylesheet (@plant/shared), for the sign-in pages.
      stylesheetRoute(SIGN_IN_ASSETS),
      realmMount(deps.providers, deps.interactions.portalUrl, deps.signInStarts),
    ],
  });
}
