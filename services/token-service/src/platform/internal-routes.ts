import { fieldsOf, jsonBody, type Route } from '@plant/shared/http';
import type { IdentityContext } from './identity-context.js';
import type { InvitationSettings } from '../people/invitations.js';
import {
  CreateServiceAccountSchema,
  UpdateServiceAccountSchema,
} from '../service-accounts/principal-validators.js';
import {
  CHANGES_QUERY,
  getRevocationChanges,
  getRevocationEntry,
  getRevocationSnapshot,
  parseChangesQuery,
} from '../revocation/revocation-feed.js';
import {
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  updateServiceAccount,
} from '../service-accounts/service-accounts.js';
import { resetServiceAccountSecret } from '../service-accounts/reset-secret.js';
import { getPublishedKeys } from '../signing-keys/signing-keys.js';
import { getTenant, listRealms } from '../realms/tenants.js';
import { signOutUserEverywhere } from '../people/users.js';
import { credentialRoutes } from '../credentials/internal-credential-routes.js';
import { peopleRoutes } from '../people/internal-people-routes.js';
import { factorRoutes } from '../second-factors/internal-factor-routes.js';
import {
  accountActionRoute,
  idOf,
  noStore,
  REPORT_INPUT,
  tenantOf,
  type InternalRoute,
} from './internal-route-helpers.js';

/** The revocation change feed every resource-server replica polls (internal-app.ts keeps its answers out of the access log). */
export const REVOCATION_CHANGES_PATH = '/internal/v1/revocations/changes';

export type { InternalRoute } from './internal-route-helpers.js';

export interface InternalRoutesDeps {
  identity: IdentityContext;
  accessTokenTtl: number;
  /** Where invitation links point and how long they work. */
  invitations: InvitationSettings;
}

/**
 * Routes behind the internal credentials (the JWKS route is declared separately, open). A route
 * is `admin` unless every resource server must call it to verify tokens.
 */
export function internalRoutes({
  identity,
  accessTokenTtl,
  invitations,
}: InternalRoutesDeps): InternalRoute[] {
  const base = '/internal/v1/realms/:tenant';
  const account = `${base}/service-accounts/:client_id`;
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
    {
      method: 'GET',
      path: `${base}/service-accounts`,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          res.json(await listServiceAccounts(identity, tenantOf(req)));
        },
      ],
    },
    {
      method: 'POST',
      path: `${base}/service-accounts`,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(CreateServiceAccountSchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const input = CreateServiceAccountSchema.parse(req.body, REPORT_INPUT);
          noStore(res)
            .status(201)
            .json(await createServiceAccount(identity, tenant, input));
        },
      ],
    },
    {
      method: 'GET',
      path: account,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          res.json(await getServiceAccount(identity, tenantOf(req), idOf(req, 'client_id')));
        },
      ],
    },
    {
      method: 'PATCH',
      path: account,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(UpdateServiceAccountSchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const clientId = idOf(req, 'client_id');
          const input = UpdateServiceAccountSchema.parse(req.body, REPORT_INPUT);
          res.json(await updateServiceAccount(identity, tenant, clientId, input));
        },
      ],
    },
    {
      method: 'DELETE',
      path: account,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          await deleteServiceAccount(identity, tenantOf(req), idOf(req, 'client_id'));
          res.status(204).end();
        },
      ],
    },
    accountActionRoute(`${account}/reset-secret`, (tenant, clientId) =>
      resetServiceAccountSecret(identity, tenant, clientId),
    ),
    ...credentialRoutes(identity, account),
    ...peopleRoutes(identity, invitations, base),
    {
      method: 'POST',
      path: `${base}/users/:id/sign-out-everywhere`,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          noStore(res).json(await signOutUserEverywhere(identity, tenantOf(req), idOf(req, 'id')));
        },
      ],
    },
    ...factorRoutes(identity, base),
    {
      method: 'GET',
      path: `${base}/principals/:sub`,
      scope: 'verify',
      handlers: [
        async (req, res) => {
          noStore(res).json(await getRevocationEntry(identity, tenantOf(req), idOf(req, 'sub')));
        },
      ],
    },
    {
      method: 'GET',
      path: '/internal/v1/revocations',
      scope: 'verify',
      handlers: [
        async (_req, res) => {
          noStore(res).json(await getRevocationSnapshot(identity, accessTokenTtl));
        },
      ],
    },
    {
      method: 'GET',
      path: REVOCATION_CHANGES_PATH,
      scope: 'verify',
      input: { query: CHANGES_QUERY },
      handlers: [
        async (req, res) => {
          const { after, limit } = parseChangesQuery(req.query);
          noStore(res).json(await getRevocationChanges(identity, accessTokenTtl, after, limit));
        },
      ],
    },
  ];
}

/** Open: public keys only. */
export function publishedKeysRoute(
  identity: Pick<IdentityContext, 'signingKeys' | 'realms'>,
  accessTokenTtl: number,
  path: string,
): Route {
  return {
    method: 'GET',
    path,
    handlers: [
      async (req, res) => {
        const jwks = await getPublishedKeys(identity, tenantOf(req), accessTokenTtl);
        res.setHeader('cache-control', 'public, max-age=30');
        res.json(jwks);
      },
    ],
  };
}
