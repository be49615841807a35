import { fieldsOf, jsonBody, type Route } from '@plant/shared/http';
import { DelegationsSchema } from '@plant/shared/token-service-client';
import { z } from 'zod';
import { actorOf, clientIdOf, noStore, requestMeta } from '../platform/index.js';
import { getDelegations, setDelegations } from './managed-delegations.js';
import type { ServiceAccountDeps } from './managed-service-accounts.js';

/** The body of `PUT …/delegations`: the whole set, each target audience once. */
export const SetDelegationsBody = z
  .object({ delegations: DelegationsSchema }, { error: 'body must be a JSON object' })
  .meta({ id: 'SetDelegations' });

/** `GET`, `PUT /api/v1/service-accounts/{client_id}/delegations` (`accountPath` is that account's path). */
export function delegationRoutes(accounts: ServiceAccountDeps, accountPath: string): Route[] {
  return [
    {
      method: 'GET',
      path: `${accountPath}/delegations`,
      handlers: [
        async (req, res) => {
          const delegations = await getDelegations(accounts, actorOf(req), clientIdOf(req));
          noStore(res).json({ delegations });
        },
      ],
    },
    {
      method: 'PUT',
      path: `${accountPath}/delegations`,
      input: { body: { type: 'json', fields: fieldsOf(SetDelegationsBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = SetDelegationsBody.parse(req.body);
          const delegations = await setDelegations(
            accounts,
            actorOf(req),
            requestMeta(req),
            clientIdOf(req),
            input.delegations.map((d) => ({ audience: d.audience, scope: d.scope })),
          );
          noStore(res).json({ delegations });
        },
      ],
    },
  ];
}
