import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { NotFound, isTenantName } from '@plant/shared/api';
import type { ExpressLayer, NodeHandler, Route } from '@plant/shared/http';
import { refusalDelay, type SourceBudget } from '@plant/shared/security';
import { isAuthorizationPath, TOO_MANY_STARTS } from './authorization-request-guard.js';
import { errorPage, pageHeaders, unknownRealmPage } from './provider-pages.js';
import type { RealmProviders } from './realm-providers.js';

type RealmRequest = IncomingMessage & {
  params: { tenant: string };
  originalUrl: string;
  baseUrl: string;
};
type RealmHandler = (req: IncomingMessage, res: ServerResponse) => void;

const REALMS = '/realms/';

/**
 * Hands a request under `/realms/<tenant>` to the realm's oidc-provider as express's mount
 * would: oidc-provider finds its mount path from `baseUrl` (the realm, as the client spelled
 * it) and routes on the rest of the URL.
 */
function serveRealm(handler: RealmHandler, req: RealmRequest, res: ServerResponse): void {
  const url = req.originalUrl;
  // An absolute-form URL (`http://host/realms/...`) keeps its scheme and host in `url`, as with express's mount.
  const pathStart = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('://') + 3);
  const realmEnd = url.indexOf('/', pathStart + REALMS.length);
  req.baseUrl = url.slice(pathStart, realmEnd);
  req.url = pathStart === 0 ? url.slice(realmEnd) : url.slice(0, pathStart) + url.slice(realmEnd);
  handler(req, res);
}

/**
 * `POST /realms/:tenant/protocol/openid-connect/token`: the grant, this service's hot path,
 * served by the grant engine with the realm's key: at once (no promise, no await) when the key
 * is cached, after reading it at the realm's first request (`grantHandlerFor`). Other methods on
 * the path go to the realm's provider through `realmMount`, which answers them (405, CORS
 * preflight) as oidc-provider does.
 */
export function tokenRoute(providers: RealmProviders): Route {
  const grant: NodeHandler<RealmRequest> = (req, res, next) => {
    const { tenant } = req.params;
    if (!isTenantName(tenant)) return next(new NotFound('Realm not found'));
    const built = providers.grantHandler(tenant);
    if (built !== undefined) return serveRealm(built, req, res);
    return providers.grantHandlerFor(tenant).then((handler) => {
      if (handler === undefined) throw new NotFound('Realm not found');
      serveRealm(handler, req, res);
    });
  };
  return {
    method: 'POST',
    path: '/realms/:tenant/protocol/openid-connect/token',
    hot: true,
    otherMethods: 'pass',
    errors: ['oauth'],
    // What the grants a realm offers read (client credentials, by secret or assertion; the portal's and plantctl's authorization code, plantctl's device code and refresh token).
    input: {
      body: {
        type: 'form',
        fields: [
          'grant_type',
          'client_id',
          'client_secret',
          'client_assertion_type',
          'client_assertion',
          'scope',
          'resource',
          'code',
          'redirect_uri',
          'code_verifier',
          // plantctl's grants (device-flow.ts in the oidc wing).
          'device_code',
          'refresh_token',
        ],
      },
    },
    handlers: [grant],
  };
}

/** The realm's endpoints a person's browser navigates to (the portal's link to sign in, sign-out). */
const BROWSER_ENDPOINTS = /^\/protocol\/openid-connect\/(?:auth|logout)(?:\/|$)/;

/**
 * A person's browser navigating to the sign-in or sign-out of a realm that does not exist (the
 * portal's link, a bookmark) gets the sign-in pages' 404 page. Everything else gets the `Error`
 * shape, as on every other unknown path: programs (no Accept, any type, JSON), every other
 * method, and the endpoints for programs (token, certs, userinfo, discovery), which answer JSON
 * whatever Accept says. The sign-in form's own paths have their page in interaction-routes.ts.
 */
function isBrowserNavigation(req: Request): boolean {
  return (
    req.method === 'GET' &&
    BROWSER_ENDPOINTS.test(req.path) &&
    req.accepts(['json', 'html']) === 'html'
  );
}

/**
 * Everything else under `/realms/:tenant` (discovery, authorization, userinfo, logout) goes to
 * the realm's provider; an unknown realm is a 404 (`portalUrl`: the way back on its page).
 */
export function realmMount(
  providers: RealmProviders,
  portalUrl: string,
  signInStarts: SourceBudget,
): ExpressLayer {
  const headers = pageHeaders(new URL(portalUrl).origin);
  // One page for every early refusal: it names no realm, so no realm is looked up for it.
  const tooManyStarts = errorPage(
    { portalUrl },
    { error: 'temporarily_unavailable', error_description: TOO_MANY_STARTS },
  );
  // A second a refusal: a flood that ignores Retry-After gets one answer per connection a second.
  const delayed = refusalDelay({ delayMs: 1000, maxHeld: 1000 });
  return {
    path: '/realms/:tenant',
    // oidc-provider's endpoints for programs answer RFC 6749 errors, those for browsers a page (provider-pages.ts).
    errors: ['oauth', 'page'],
    use: [
      async function realm(req: Request, res: Response, next: NextFunction) {
        // A source this process already refused sign-in starts to (authorization-request-guard.ts)
        // is answered here, before the realm's provider, and a second later: a flood from it
        // costs next to nothing.
        const refused = isAuthorizationPath(req.path)
          ? signInStarts.refused(req.ip ?? '')
          : undefined;
        if (refused !== undefined) {
          delayed(res, () =>
            res
              .set(headers)
              .set('retry-after', String(refused.retryAfterSeconds))
              .status(429)
              .type('html')
              .send(tooManyStarts),
          );
          return;
        }
        const tenant = String(req.params.tenant);
        const handler = isTenantName(tenant) ? await providers.handlerFor(tenant) : undefined;
        if (!handler && isBrowserNavigation(req)) {
          res.set(headers).status(404).type('html').send(unknownRealmPage(tenant, portalUrl));
          return;
        }
        if (!handler) {
          next(new NotFound('Realm not found'));
          return;
        }
        handler(req, res);
      },
    ],
  };
}
