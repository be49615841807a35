import { fieldsOf, jsonBody } from '@plant/shared/http';
import {
  type IdentityContext,
  accountActionRoute,
  idOf,
  noStore,
  REPORT_INPUT,
  tenantOf,
  type InternalRoute,
} from '../platform/index.js';
import { CreateServiceAccountSchema, UpdateServiceAccountSchema } from './principal-validators.js';
import {
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  updateServiceAccount,
} from './service-accounts.js';
import { resetServiceAccountSecret } from './reset-secret.js';

/** A realm's service accounts (`base`) and one account (`account`): account-admin's (`admin`). */
export function serviceAccountRoutes(
  identity: IdentityContext,
  base: string,
  account: string,
): InternalRoute[] {
  return [
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
  ];
}
