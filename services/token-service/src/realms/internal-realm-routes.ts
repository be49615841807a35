import { type IdentityContext, noStore, tenantOf, type InternalRoute } from '../platform/index.js';
import { getTenant, listRealms } from './tenants.js';

/** The realms every resource server lists (`verify`), and one realm as account-admin reads it. */
export function internalRealmRoutes(identity: IdentityContext, base: string): InternalRoute[] {
  return [
    {
      method: 'GET',
      path: '/internal/v1/realms',
      scope: 'verify',
      handlers: [
        async (_req, res) => {
          noStore(res).json(await listRealms(identity));
        },
      ],
    },
    {
      method: 'GET',
      path: base,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          res.json(await getTenant(identity, tenantOf(req)));
        },
      ],
    },
  ];
}
