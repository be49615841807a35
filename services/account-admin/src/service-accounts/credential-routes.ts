import { fieldsOf, jsonBody, type Route } from '@plant/shared/http';
import type { Request } from 'express';
import {
  addServiceAccountKey,
  addServiceAccountSecret,
  addServiceAccountTrust,
  getServiceAccountCredentials,
  removeServiceAccountCredential,
  type RemovedCredential,
} from './managed-credentials.js';
import { setServiceAccountDisabled, type ServiceAccountDeps } from './managed-service-accounts.js';
import {
  AddKeyBody,
  AddSecretBody,
  AddTrustBody,
} from './service-account-credential-validators.js';
import { actorOf, clientIdOf, etagged, noStore, requestMeta } from '../platform/index.js';

/**
 * A service account's credentials beyond the secret, the secret's removal, and disabling
 * (`accountPath` is `/api/v1/service-accounts/:client_id`). Read: every role; changes: a user
 * with Account Admin, as for every other change.
 */
// long: one route table, an entry per operation; each handler is parse, one use case, answer.
export function credentialRoutes(accounts: ServiceAccountDeps, accountPath: string): Route[] {
  const removal = (path: string, removed: (req: Request) => RemovedCredential): Route => ({
    method: 'DELETE',
    path: `${accountPath}${path}`,
    handlers: [
      async (req, res) => {
        await removeServiceAccountCredential(
          accounts,
          actorOf(req),
          requestMeta(req),
          clientIdOf(req),
          removed(req),
        );
        noStore(res).status(204).end();
      },
    ],
  });
  const toggle = (disabled: boolean): Route => ({
    method: 'POST',
    path: `${accountPath}/${disabled ? 'disable' : 'enable'}`,
    handlers: [
      async (req, res) => {
        const account = await setServiceAccountDisabled(
          accounts,
          actorOf(req),
          requestMeta(req),
          clientIdOf(req),
          disabled,
        );
        noStore(res).json(etagged(res, account));
      },
    ],
  });
  return [
    {
      method: 'GET',
      path: `${accountPath}/credentials`,
      handlers: [
        async (req, res) => {
          noStore(res).json(
            await getServiceAccountCredentials(accounts, actorOf(req), clientIdOf(req)),
          );
        },
      ],
    },
    {
      method: 'POST',
      path: `${accountPath}/keys`,
      input: { body: { type: 'json', fields: fieldsOf(AddKeyBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = AddKeyBody.parse(req.body);
          noStore(res)
            .status(201)
            .json(
              await addServiceAccountKey(
                accounts,
                actorOf(req),
                requestMeta(req),
                clientIdOf(req),
                input,
              ),
            );
        },
      ],
    },
    removal('/keys/:key_id', (req) => ({ kind: 'key', id: String(req.params.key_id) })),
    {
      method: 'POST',
      path: `${accountPath}/trusts`,
      input: { body: { type: 'json', fields: fieldsOf(AddTrustBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = AddTrustBody.parse(req.body);
          noStore(res)
            .status(201)
            .json(
              await addServiceAccountTrust(
                accounts,
                actorOf(req),
                requestMeta(req),
                clientIdOf(req),
                input,
              ),
            );
        },
      ],
    },
    removal('/trusts/:trust_id', (req) => ({ kind: 'trust', id: String(req.params.trust_id) })),
    removal('/secret', () => ({ kind: 'secret' })),
    {
      method: 'POST',
      path: `${accountPath}/secrets`,
      input: { body: { type: 'json', fields: fieldsOf(AddSecretBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = AddSecretBody.parse(req.body ?? {});
          noStore(res)
            .status(201)
            .json(
              await addServiceAccountSecret(
                accounts,
                actorOf(req),
                requestMeta(req),
                clientIdOf(req),
                input,
              ),
            );
        },
      ],
    },
    removal('/secrets/:secret_id', (req) => ({
      kind: 'secret',
      id: String(req.params.secret_id),
    })),
    toggle(true),
    toggle(false),
  ];
}
