import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { RequestObserver } from '@plant/shared';
import { isTenantName } from '../../domain/principal-validators.js';
import type { RealmProviders } from '../../provider/realm-providers.js';

const TOKEN_REQUEST = /^\/realms\/([^/?#]+)(\/protocol\/openid-connect\/token(?:\?.*)?)$/s;
const TOKEN_ROUTE = '/realms/:tenant/protocol/openid-connect/token';
const tokenRoute = () => TOKEN_ROUTE;

/**
 * The public listener. A token request for a realm whose provider is already built goes
 * straight to that provider, past express: grants are this service's hot path and express's
 * router in front of oidc-provider's own koa stack cost ~20 % of each. It gets the same
 * request id, access line and metrics as every other request. Everything else — health,
 * metrics, JWKS, the sign-in pages, a realm not built yet or unknown — goes to `app`,
 * which serves the token endpoint too, so both paths answer alike.
 */
export function createPublicListener(app: RequestListener, providers: RealmProviders, observe: RequestObserver): RequestListener {
  return function routePublicRequest(req: IncomingMessage, res: ServerResponse): void {
    const match = TOKEN_REQUEST.exec(req.url ?? '');
    const tenant = match?.[1];
    const handler = tenant !== undefined && isTenantName(tenant) ? providers.builtHandler(tenant) : undefined;
    if (handler === undefined) {
      app(req, res);
      return;
    }
    // What express's mount would have set: oidc-provider finds its mount path from these.
    const mounted = req as IncomingMessage & { originalUrl?: string; baseUrl?: string };
    mounted.originalUrl = req.url;
    mounted.baseUrl = `/realms/${tenant}`;
    req.url = match![2]!;
    observe(req, res, tokenRoute, () => handler(req, res));
  };
}
