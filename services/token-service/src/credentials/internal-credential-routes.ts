import { fieldsOf, jsonBody } from '@plant/shared/http';
import {
  getCredentialPolicy,
  setServiceAccountQuota,
  updateCredentialPolicy,
} from './credential-policy.js';
import {
  AddKeySchema,
  AddSecretSchema,
  AddTrustSchema,
  SetQuotaSchema,
  UpdateCredentialPolicySchema,
  setServiceAccountDisabled,
} from '../service-accounts/index.js';
import {
  type IdentityContext,
  accountActionRoute,
  idOf,
  noStore,
  REPORT_INPUT,
  tenantOf,
  type InternalRoute,
} from '../platform/index.js';
import {
  addServiceAccountKey,
  addServiceAccountSecret,
  addServiceAccountTrust,
  getServiceAccountCredentials,
  removeServiceAccountKey,
  removeServiceAccountSecret,
  removeServiceAccountSecretById,
  removeServiceAccountTrust,
} from './service-account-credentials.js';

/**
 * A service account's credentials beyond the secret (keys, trusted workloads), the secret's
 * removal, and disabling: account-admin's alone (`admin`), like every management route. `account`
 * is the account's path. The order is the internal route table's (and its OpenAPI document's).
 */
export function credentialRoutes(identity: IdentityContext, account: string): InternalRoute[] {
  const realm = account.slice(0, account.indexOf('/service-accounts/'));
  return [
    ...policyRoutes(identity, realm),
    quotaRoute(identity, account),
    credentialsRoute(identity, account),
    ...keyRoutes(identity, account),
    ...trustRoutes(identity, account),
    secretRoute(identity, account),
    ...secretsRoutes(identity, account),
    toggleRoute(identity, account, true),
    toggleRoute(identity, account, false),
  ];
}

/** The account's own grant quota. */
function quotaRoute(identity: IdentityContext, account: string): InternalRoute {
  return {
    method: 'PUT',
    path: `${account}/quota`,
    scope: 'admin',
    input: { body: { type: 'json', fields: fieldsOf(SetQuotaSchema) } },
    handlers: [
      jsonBody(),
      async (req, res) => {
        const tenant = tenantOf(req);
        const clientId = idOf(req, 'client_id');
        const { quota } = SetQuotaSchema.parse(req.body, REPORT_INPUT);
        noStore(res).json(await setServiceAccountQuota(identity, tenant, clientId, quota));
      },
    ],
  };
}

/** Every credential of the account, as the API shows them. */
function credentialsRoute(identity: IdentityContext, account: string): InternalRoute {
  return {
    method: 'GET',
    path: `${account}/credentials`,
    scope: 'admin',
    handlers: [
      async (req, res) => {
        noStore(res).json(
          await getServiceAccountCredentials(identity, tenantOf(req), idOf(req, 'client_id')),
        );
      },
    ],
  };
}

/** Adding and removing a public key. */
function keyRoutes(identity: IdentityContext, account: string): InternalRoute[] {
  return [
    {
      method: 'POST',
      path: `${account}/keys`,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(AddKeySchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const clientId = idOf(req, 'client_id');
          const input = AddKeySchema.parse(req.body, REPORT_INPUT);
          noStore(res)
            .status(201)
            .json(await addServiceAccountKey(identity, tenant, clientId, input));
        },
      ],
    },
    {
      method: 'DELETE',
      path: `${account}/keys/:key_id`,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          await removeServiceAccountKey(
            identity,
            tenantOf(req),
            idOf(req, 'client_id'),
            idOf(req, 'key_id'),
          );
          res.status(204).end();
        },
      ],
    },
  ];
}

/** Adding and removing a trusted workload. */
function trustRoutes(identity: IdentityContext, account: string): InternalRoute[] {
  return [
    {
      method: 'POST',
      path: `${account}/trusts`,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(AddTrustSchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const clientId = idOf(req, 'client_id');
          const input = AddTrustSchema.parse(req.body, REPORT_INPUT);
          noStore(res)
            .status(201)
            .json(await addServiceAccountTrust(identity, tenant, clientId, input));
        },
      ],
    },
    {
      method: 'DELETE',
      path: `${account}/trusts/:trust_id`,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          await removeServiceAccountTrust(
            identity,
            tenantOf(req),
            idOf(req, 'client_id'),
            idOf(req, 'trust_id'),
          );
          res.status(204).end();
        },
      ],
    },
  ];
}

/** Removing the secret (Reset Secret is among the account's own routes). */
function secretRoute(identity: IdentityContext, account: string): InternalRoute {
  return {
    method: 'DELETE',
    path: `${account}/secret`,
    scope: 'admin',
    handlers: [
      async (req, res) => {
        await removeServiceAccountSecret(identity, tenantOf(req), idOf(req, 'client_id'));
        res.status(204).end();
      },
    ],
  };
}

/** Adding a second secret (shown once) and removing one secret by its id. */
function secretsRoutes(identity: IdentityContext, account: string): InternalRoute[] {
  return [
    {
      method: 'POST',
      path: `${account}/secrets`,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(AddSecretSchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const clientId = idOf(req, 'client_id');
          const input = AddSecretSchema.parse(req.body, REPORT_INPUT);
          noStore(res)
            .status(201)
            .json(await addServiceAccountSecret(identity, tenant, clientId, input));
        },
      ],
    },
    {
      method: 'DELETE',
      path: `${account}/secrets/:secret_id`,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          await removeServiceAccountSecretById(
            identity,
            tenantOf(req),
            idOf(req, 'client_id'),
            idOf(req, 'secret_id'),
          );
          res.status(204).end();
        },
      ],
    },
  ];
}

/** Disabling or enabling the account. */
function toggleRoute(identity: IdentityContext, account: string, disabled: boolean): InternalRoute {
  return accountActionRoute(`${account}/${disabled ? 'disable' : 'enable'}`, (tenant, clientId) =>
    setServiceAccountDisabled(identity, tenant, clientId, disabled),
  );
}

/** The tenant's credential policy (account-admin's alone, like every management route). */
function policyRoutes(identity: IdentityContext, realm: string): InternalRoute[] {
  const path = `${realm}/credential-policy`;
  return [
    {
      method: 'GET',
      path,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          noStore(res).json(await getCredentialPolicy(identity, tenantOf(req)));
        },
      ],
    },
    {
      method: 'PATCH',
      path,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(UpdateCredentialPolicySchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const input = UpdateCredentialPolicySchema.parse(req.body, REPORT_INPUT);
          noStore(res).json(await updateCredentialPolicy(identity, tenant, input));
        },
      ],
    },
  ];
}
