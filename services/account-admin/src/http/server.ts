import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import {
  apiDocumentHandler,
  createHttpApp,
  methodNotAllowed,
  type HttpApp,
  type TrustProxy,
} from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import { stylesheetRoute } from '@plant/shared/page-look';
import type { SourceBudget } from '@plant/shared/security';
import type { TokenServiceClient } from '@plant/shared/token-service-client';
import type { BearerAuth } from '@plant/resource-auth';
import type { Registry } from 'prom-client';
import type { AuditTrail } from '../audit/index.js';
import type { SessionStore, PortalSessions } from '../sessions/index.js';
import type { ServiceAccountDeps } from '../service-accounts/index.js';
import type { PeopleDeps } from '../people/index.js';
import { type OidcClients, signInRoutes } from '../sign-in/index.js';
import { ASSETS_PATH, browserErrorPages } from '../portal/index.js';
import { portalRoutes } from './portal-routes.js';
import { openApiDocument } from './openapi.js';
import { API_BASE, apiRoutes } from './api-routes.js';
import { plantctlConfigurationRoute } from './plantctl-configuration.js';

export interface AppDependencies {
  accounts: ServiceAccountDeps;
  people: PeopleDeps;
  audit: AuditTrail;
  tokenService: TokenServiceClient;
  store: SessionStore;
  sessions: PortalSessions;
  /** Sign-ins started (pending sign-ins stored) per source and in total. */
  signInStarts: SourceBudget;
  oidc: OidcClients;
  auth: BearerAuth;
  logger: Logger;
  /** Where request metrics go; the management port (`createManagementApp`) exposes them. */
  metrics: Registry;
  portalUrl: string;
  authUrl: string;
  /** The `aud` this API's bearer tokens carry (ACCOUNT_ADMIN_AUDIENCE), told to plantctl. */
  audience: string;
  sessionSecret: string;
  /** Proxy hops whose X-Forwarded-For to trust (the audit address). */
  trustProxy: TrustProxy;
}

/** Static files live beside src/ and dist/, so the same path works from both. */
export const ASSETS_DIR = fileURLToPath(new URL('../../public/', import.meta.url));

function origin(url: string): string {
  return new URL(url).origin;
}

/**
 * account-admin's public request listener: the portal pages, sign-in, and the REST API under
 * /api/v1 (`api-routes.ts`); probes and metrics are the management port's.
 */
export function createApp(deps: AppDependencies): HttpApp {
  const { logger, metrics, portalUrl } = deps;
  const https = portalUrl.startsWith('https:');
  const describeApi = apiDocumentHandler(() => openApiDocument(portalUrl));
  return createHttpApp({
    logger,
    metrics,
    trustProxy: deps.trustProxy,
    routes: [
      { use: [securityHeaders(https, deps.authUrl)] },
      // The stylesheet every page shares (the token service's sign-in pages too), from @plant/shared.
      stylesheetRoute(ASSETS_PATH),
      // The portal's script. Files only: a directory is a 404, not a redirect whose Location echoes the request's path.
      {
        path: ASSETS_PATH,
        use: [
          readOnly,
          express.static(ASSETS_DIR, {
            index: false,
            redirect: false,
            fallthrough: false,
            maxAge: '5m',
          }),
        ],
      },
      { method: 'GET', path: `${API_BASE}/openapi.json`, handlers: [describeApi] },
      plantctlConfigurationRoute({ authUrl: deps.authUrl, portalUrl, audience: deps.audience }),
      ...apiRoutes({
        accounts: deps.accounts,
        people: deps.people,
        audit: deps.audit,
        portalUrl,
        auth: deps.auth,
        sessions: deps.sessions,
        tokenService: deps.tokenService,
        store: deps.store,
      }),
      ...signInRoutes({
        oidc: deps.oidc,
        store: deps.store,
        sessions: deps.sessions,
        starts: deps.signInStarts,
        tokenService: deps.tokenService,
        secret: deps.sessionSecret,
        portalUrl,
        logger,
      }),
      ...portalRoutes({
        accounts: deps.accounts,
        people: deps.people,
        audit: deps.audit,
        sessions: deps.sessions,
        store: deps.store,
        logger,
        authUrl: deps.authUrl,
      }),
      // Last: an unknown path or another route's error is a page for a browser, JSON for the rest.
      {
        use: browserErrorPages(logger, async (req) => (await deps.sessions.load(req))?.session),
      },
    ],
  });
}

const rejectWrite = methodNotAllowed(['GET', 'HEAD']);
/** The assets' other methods get the `Error` shape (serve-static's own 405 has no body). */
function readOnly(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'GET' || req.method === 'HEAD') next();
  else rejectWrite(req, res, next);
}

function securityHeaders(https: boolean, authUrl: string) {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
        // The tenant picker's form redirects to the realm's sign-in page.
        formAction: ["'self'", origin(authUrl)],
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    strictTransportSecurity: https,
    referrerPolicy: { policy: 'same-origin' },
  });
}
