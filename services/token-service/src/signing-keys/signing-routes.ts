import { fieldsOf, jsonBody, type Route } from '@plant/shared/http';
import {
  type IdentityContext,
  noStore,
  REPORT_INPUT,
  tenantOf,
  type InternalRoute,
} from '../platform/index.js';
import {
  getPublishedKeys,
  getSigningAlgorithm,
  publishRotation,
  SetSigningAlgorithmSchema,
  setSigningAlgorithm,
} from './signing-keys.js';

export interface SigningRoutesDeps {
  identity: IdentityContext;
  /** After a rotation: every replica (this one at once) rebuilds the realm with its new key. */
  announceKeyChange(tenant: string): Promise<void>;
}

/**
 * A realm's token signing algorithm (docs/architecture.md, "Access tokens"). `admin`: changing
 * it decides which resource servers can still verify the realm's tokens, so it is as much
 * account-admin's credential's as managing the realm's service accounts, and never a resource
 * server's.
 */
export function signingRoutes({ identity, announceKeyChange }: SigningRoutesDeps): InternalRoute[] {
  const path = '/internal/v1/realms/:tenant/signing-algorithm';
  return [
    {
      method: 'GET',
      path,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          noStore(res).json(await getSigningAlgorithm(identity, tenantOf(req)));
        },
      ],
    },
    {
      method: 'PUT',
      path,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(SetSigningAlgorithmSchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const { alg } = SetSigningAlgorithmSchema.parse(req.body, REPORT_INPUT);
          const change = await setSigningAlgorithm(identity, tenant, alg);
          if (change.rotated) await publishRotation(announceKeyChange, tenant);
          noStore(res).json(change);
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
