import { fieldsOf, jsonBody } from '@plant/shared/http';
import { DelegationsSchema } from '@plant/shared/token-service-client';
import {
  ActorBodySchema,
  type IdentityContext,
  idOf,
  noStore,
  REPORT_INPUT,
  tenantOf,
  type InternalRoute,
} from '../platform/index.js';
import { getDelegations, setDelegations } from './delegations.js';

/** Built when the routes are (the validators' module is still loading when this one is). */
const setDelegationsSchema = () => ActorBodySchema.extend({ delegations: DelegationsSchema });

/** `GET`, `PUT {account}/delegations`: where the account may act for others (account-admin's, `admin`). */
export function delegationRoutes(
  identity: IdentityContext,
  account: string,
  audiences: readonly string[],
): InternalRoute[] {
  const SetDelegationsSchema = setDelegationsSchema();
  return [
    {
      method: 'GET',
      path: `${account}/delegations`,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          const delegations = await getDelegations(identity, tenantOf(req), idOf(req, 'client_id'));
          noStore(res).json({ delegations });
        },
      ],
    },
    {
      method: 'PUT',
      path: `${account}/delegations`,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(SetDelegationsSchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const clientId = idOf(req, 'client_id');
          const input = SetDelegationsSchema.parse(req.body, REPORT_INPUT);
          const delegations = await setDelegations(
            identity,
            tenant,
            clientId,
            input.delegations,
            audiences,
            input.actor ?? null,
          );
          noStore(res).json({ delegations });
        },
      ],
    },
  ];
}
