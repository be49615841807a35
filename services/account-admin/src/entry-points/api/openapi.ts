import { PLANT_TAG_MAX } from '@plant/shared';
import { MAX_GRANTS, MAX_SERVICE_ACCOUNTS, SERVICE_ACCOUNT_NAME_MAX } from '@plant/shared';
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from '../../domain/service-account-validators.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const error = (description: string) => ({ description, content: { 'application/json': { schema: ref('Error') } } });
const json = (description: string, schema: unknown) => ({ description, content: { 'application/json': { schema } } });

const common = {
  '401': error('No credentials, or an invalid, expired or revoked token (WWW-Authenticate: Bearer)'),
  '503': error('The token service or the audit trail is unavailable; nothing was changed'),
};
const management = {
  ...common,
  '403': error('Not a user with Account Admin (service-account tokens always), or a missing/mismatched X-CSRF-Token on a session request'),
};
const clientIdParam = { name: 'client_id', in: 'path', required: true, schema: { type: 'string', maxLength: 128 } };

/** The OpenAPI 3.1 document served at /api/v1/openapi.json. */
export function openApiDocument(portalUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Plant Store account admin API',
      version: '1.0.0',
      description:
        'Manage the service accounts of your Plant Store tenant. Authenticate with `Authorization: Bearer <access token>` from your tenant\'s realm ' +
        `(audience ${'`ACCOUNT_ADMIN_AUDIENCE`'}) or with the portal session, whose state-changing requests must send the csrf_token cookie value in X-CSRF-Token. ` +
        `Creating, resetting, deleting and changing service accounts needs a human user with the Account Admin role. At most ${MAX_SERVICE_ACCOUNTS} service accounts per tenant.`,
    },
    servers: [{ url: `${portalUrl.replace(/\/+$/, '')}/api/v1` }],
    security: [{ bearer: [] }, { session: [] }],
    paths: {
      '/me': { get: { summary: 'Who am I', operationId: 'getMe', responses: { '200': json('The caller', ref('Me')), ...common } } },
      '/service-accounts': {
        get: { summary: 'List service accounts (name order)', operationId: 'listServiceAccounts', responses: { '200': json('The tenant\'s service accounts', { type: 'array', items: ref('ServiceAccount') }), ...common } },
        post: {
          summary: 'Create a service account (role View); the secret is returned only here',
          operationId: 'createServiceAccount',
          requestBody: { required: true, content: { 'application/json': { schema: ref('NewServiceAccount') } } },
          responses: {
            '201': json('Created; client_id and secret shown once', ref('ServiceAccountWithSecret')),
            '400': error('Invalid body'),
            '409': error(`A service account with this name exists, or the tenant has ${MAX_SERVICE_ACCOUNTS} (each with its own message)`),
            '413': error('Body larger than 16 KiB'),
            '415': error('Not application/json'),
            ...management,
          },
        },
      },
      '/service-accounts/{client_id}': {
        parameters: [clientIdParam],
        get: { summary: 'Get a service account', operationId: 'getServiceAccount', responses: { '200': json('The service account', ref('ServiceAccount')), '404': error('Unknown in this tenant'), ...common } },
        patch: {
          summary: 'Change role and/or grants; older tokens of the account are revoked',
          operationId: 'updateServiceAccount',
          requestBody: { required: true, content: { 'application/json': { schema: ref('ServiceAccountChange') } } },
          responses: { '200': json('Updated', ref('ServiceAccount')), '400': error('Invalid body'), '404': error('Unknown in this tenant'), ...management },
        },
        delete: { summary: 'Delete a service account; its tokens stop working', operationId: 'deleteServiceAccount', responses: { '204': { description: 'Deleted' }, '404': error('Unknown in this tenant'), ...management } },
      },
      '/service-accounts/{client_id}/reset-secret': {
        parameters: [clientIdParam],
        post: {
          summary: 'Replace the secret; the old one and older tokens stop working at once',
          operationId: 'resetServiceAccountSecret',
          responses: { '200': json('The new secret, shown once', ref('ServiceAccountWithSecret')), '404': error('Unknown in this tenant'), ...management },
        },
      },
      '/audit-events': {
        get: {
          summary: 'The audit trail, newest first; more pages via the Link rel="next" header',
          operationId: 'listAuditEvents',
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: AUDIT_PAGE_MAX, default: AUDIT_PAGE_DEFAULT } },
            { name: 'cursor', in: 'query', schema: { type: 'string' }, description: 'Opaque; from the Link header' },
          ],
          responses: { '200': json('A page of events', { type: 'array', items: ref('AuditEvent') }), '400': error('Invalid limit or cursor'), ...common },
        },
      },
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        session: { type: 'apiKey', in: 'cookie', name: 'aa_session' },
      },
      schemas: {
        Error: { type: 'object', required: ['error', 'message'], properties: { error: { type: 'integer', format: 'int32' }, message: { type: 'string' } } },
        Grant: {
          type: 'object',
          required: ['tag', 'permission'],
          additionalProperties: false,
          properties: { tag: { type: 'string', minLength: 1, maxLength: PLANT_TAG_MAX }, permission: { const: 'edit' } },
        },
        ServiceAccount: {
          type: 'object',
          required: ['name', 'client_id', 'role', 'grants', 'created_at', 'created_by', 'last_used_at'],
          properties: {
            name: { type: 'string' },
            client_id: { type: 'string' },
            role: { enum: ['View', 'Edit'] },
            grants: { type: 'array', items: ref('Grant') },
            created_at: { type: 'string', format: 'date-time' },
            created_by: { type: ['string', 'null'] },
            last_used_at: { type: ['string', 'null'], format: 'date-time' },
          },
        },
        ServiceAccountWithSecret: { allOf: [ref('ServiceAccount'), { type: 'object', required: ['secret'], properties: { secret: { type: 'string' } } }] },
        NewServiceAccount: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { name: { type: 'string', minLength: 1, maxLength: SERVICE_ACCOUNT_NAME_MAX, description: 'Unique in the tenant (case-insensitive); no control characters' } },
        },
        ServiceAccountChange: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: { role: { enum: ['View', 'Edit'] }, grants: { type: 'array', maxItems: MAX_GRANTS, items: ref('Grant'), description: 'Replaces the grants; tags unique' } },
        },
        Me: {
          type: 'object',
          required: ['tenant', 'sub', 'email', 'principal_type', 'role', 'can_manage_service_accounts'],
          properties: {
            tenant: { type: 'string' },
            sub: { type: 'string' },
            email: { type: ['string', 'null'] },
            principal_type: { enum: ['user', 'service_account'] },
            role: { enum: ['View', 'Edit', 'Account Admin'] },
            can_manage_service_accounts: { type: 'boolean' },
          },
        },
        AuditEvent: {
          type: 'object',
          required: ['id', 'occurred_at', 'actor_sub', 'actor_email', 'actor_type', 'action', 'client_id', 'name', 'details', 'request_id', 'address'],
          properties: {
            id: { type: 'string' },
            occurred_at: { type: 'string', format: 'date-time' },
            actor_sub: { type: 'string' },
            actor_email: { type: ['string', 'null'] },
            actor_type: { enum: ['user', 'service_account'] },
            action: { enum: ['service_account.create', 'service_account.update', 'service_account.reset_secret', 'service_account.delete'] },
            client_id: { type: 'string' },
            name: { type: ['string', 'null'] },
            details: { type: 'object', description: 'Non-secret facts of the change, e.g. {role: {from, to}}' },
            request_id: { type: ['string', 'null'] },
            address: { type: ['string', 'null'] },
          },
        },
      },
    },
  };
}
