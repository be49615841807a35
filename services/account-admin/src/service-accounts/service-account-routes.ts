import { fieldsOf, jsonBody, type RouteTable } from '@plant/shared/http';
import {
  clientIdOf,
  etagged,
  noStore,
  requestMeta,
  actorOf,
  withoutRevision,
} from '../platform/index.js';
import {
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  resetServiceAccountSecret,
  updateServiceAccount,
  type ServiceAccountDeps,
} from './managed-service-accounts.js';
import {
  CreateServiceAccountBody,
  UpdateServiceAccountBody,
} from './service-account-validators.js';

/**
 * The service accounts themselves under `apiBase` (`/api/v1`): list and create, read, change
 * and delete one, reset its secret. Reads: every role; changes: a user with Account Admin.
 * An account answers its `ETag`; its changes take `If-Match` (api-routes.ts makes them
 * `conditional`).
 */
// long: one route table, an entry per operation; each handler is parse, one use case, answer.
export function serviceAccountRoutes(accounts: ServiceAccountDeps, apiBase: string): RouteTable {
  const accountPath = `${apiBase}/service-accounts/:client_id`;
  return [
    {
      method: 'GET',
      path: `${apiBase}/service-accounts`,
      handlers: [
        async (req, res) => {
          noStore(res).json(
            (await listServiceAccounts(accounts, actorOf(req))).map(withoutRevision),
          );
        },
      ],
    },
    {
      method: 'POST',
      path: `${apiBase}/service-accounts`,
      input: { body: { type: 'json', fields: fieldsOf(CreateServiceAccountBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = CreateServiceAccountBody.parse(req.body);
          const created = await createServiceAccount(
            accounts,
            actorOf(req),
            requestMeta(req),
            input,
          );
          noStore(res)
            .status(201)
            .setHeader(
              'location',
              `${apiBase}/service-accounts/${encodeURIComponent(created.client_id)}`,
            )
            .json(etagged(res, created));
        },
      ],
    },
    {
      method: 'GET',
      path: accountPath,
      handlers: [
        async (req, res) => {
          noStore(res).json(
            etagged(res, await getServiceAccount(accounts, actorOf(req), clientIdOf(req))),
          );
        },
      ],
    },
    {
      method: 'PATCH',
      path: accountPath,
      input: { body: { type: 'json', fields: fieldsOf(UpdateServiceAccountBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = UpdateServiceAccountBody.parse(req.body);
          const updated = await updateServiceAccount(
            accounts,
            actorOf(req),
            requestMeta(req),
            clientIdOf(req),
            input,
          );
          noStore(res).json(etagged(res, updated));
        },
      ],
    },
    {
      method: 'DELETE',
      path: accountPath,
      handlers: [
        async (req, res) => {
          await deleteServiceAccount(accounts, actorOf(req), requestMeta(req), clientIdOf(req));
          noStore(res).status(204).end();
        },
      ],
    },
    {
      method: 'POST',
      path: `${accountPath}/reset-secret`,
      handlers: [
        async (req, res) => {
          const reset = await resetServiceAccountSecret(
            accounts,
            actorOf(req),
            requestMeta(req),
            clientIdOf(req),
          );
          noStore(res).json(etagged(res, reset));
        },
      ],
    },
  ];
}
