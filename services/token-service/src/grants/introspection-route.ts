import type { IncomingMessage } from 'node:http';
import { NotFound, isTenantName } from '@plant/shared/api';
import {
  clientAddress,
  formBody,
  sendJson,
  type HotRoute,
  type NodeHandler,
  type TrustProxy,
} from '@plant/shared/http';
import type { ResourceServerAuthentication } from './authenticate-resource-server.js';
import { introspectToken, type TokenInspector } from './introspect-token.js';
import { INTROSPECTION_PATH } from '../realms/index.js';

export interface IntrospectionDeps {
  authenticator: ResourceServerAuthentication;
  inspector: TokenInspector;
  trustProxy: TrustProxy;
}

type IntrospectionRequest = IncomingMessage & {
  params: { tenant: string };
  body?: Record<string, string>;
};

/**
 * `POST /realms/:tenant/protocol/openid-connect/token/introspect` (RFC 7662, Keycloak's path):
 * the caller's credential first (grants/authenticate-resource-server.ts), then the form, then
 * the verdict (grants/introspect-token.ts). A hot route: resource servers that ask on every
 * request make it as frequent as the API calls they guard. Errors are in the `Error` shape
 * (the caller authenticates as a bearer, RFC 6750, not as an OAuth client).
 */
export function introspectionRoute({
  authenticator,
  inspector,
  trustProxy,
}: IntrospectionDeps): HotRoute {
  const addressOf = clientAddress(trustProxy);
  const authenticate: NodeHandler<IntrospectionRequest> = (req, _res, next) => {
    authenticator
      .authenticate(req.headers.authorization, { ip: addressOf(req), req })
      .then(() => next(), next);
  };
  const introspect: NodeHandler<IntrospectionRequest> = async (req, res) => {
    const { tenant } = req.params;
    // A realm that does not exist needs no lookup: no token of it verifies, so each is inactive.
    if (!isTenantName(tenant)) throw new NotFound('Realm not found');
    const answer = await introspectToken(inspector, tenant, req.body ?? {});
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, answer);
  };
  return {
    method: 'POST',
    path: `/realms/:tenant${INTROSPECTION_PATH}`,
    hot: true,
    input: { body: { type: 'form', fields: ['token', 'token_type_hint'] } },
    handlers: [authenticate, formBody(), introspect],
  };
}
