/**
 * `GET /.well-known/plantctl-configuration?tenant=<t>`: what the admin CLI needs to sign in from
 * the portal URL a person knows — the tenant's realm (issuer), the public client it signs in as,
 * and the audience and base of this API. Public and computed from configuration alone (no
 * lookup, nothing stored), so it costs an anonymous caller nothing and tells no one whether a
 * tenant exists: the realm's own discovery answers that (404).
 */
import { BadRequest, isTenantName, PLANTCTL_CLIENT_ID } from '@plant/shared/api';
import type { Route } from '@plant/shared/http';
import { API_BASE } from './api-routes.js';

export const PLANTCTL_CONFIGURATION_PATH = '/.well-known/plantctl-configuration';

export function plantctlConfigurationRoute({
  authUrl,
  portalUrl,
  audience,
}: {
  authUrl: string;
  portalUrl: string;
  audience: string;
}): Route {
  return {
    method: 'GET',
    path: PLANTCTL_CONFIGURATION_PATH,
    input: { query: ['tenant'] },
    handlers: [
      (req, res) => {
        const tenant = req.query.tenant;
        if (typeof tenant !== 'string' || !isTenantName(tenant))
          throw new BadRequest('tenant must be given once, a tenant name (a-z, 0-9, -)');
        res.setHeader('cache-control', 'public, max-age=300');
        res.json({
          issuer: `${authUrl.replace(/\/+$/, '')}/realms/${tenant}`,
          client_id: PLANTCTL_CLIENT_ID,
          audience,
          api: `${portalUrl.replace(/\/+$/, '')}${API_BASE}`,
        });
      },
    ],
  };
}
