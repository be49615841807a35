/**
 * The account admin API's OpenAPI 3.1 document, served at `/api/v1/openapi.json`. Generated
 * from the schemas the routes validate with (service-account-validators.ts) and the response
 * shapes (response-schemas.ts); test/openapi-contract.test.ts gives the routes' parsers and
 * the generated document the same inputs at and around every bound.
 */
import {
  BEARER_JWT,
  errorResponses,
  generateApiDocument,
  JSON_BODY_ERRORS,
  jsonPageResponse,
  jsonRequestBody,
  jsonResponse,
  OpenAPIRegistry,
  type OpenApiDocument,
} from '@plant/shared/http';
import { MAX_SERVICE_ACCOUNTS } from '@plant/shared/token-service-client';
import { z } from 'zod';
import { AuditEventsQuery } from '../audit/audit-event-validators.js';
import {
  CreateServiceAccountBody,
  ServiceAccountPath,
  UpdateServiceAccountBody,
} from '../service-accounts/service-account-validators.js';
import { registerCredentialOperations } from '../service-accounts/credential-operations.js';
import { registerCredentialPolicyOperations } from '../credential-policy/credential-policy-routes.js';
import { registerPeopleOperations } from '../people/people-operations.js';
import { registerSessionOperations } from '../sessions/session-operations.js';
import { registerFactorOperations } from '../second-factors/factor-operations.js';
import {
  AuditEventSchema,
  MeSchema,
  ServiceAccountSchema,
  ServiceAccountWithSecretSchema,
} from '../service-accounts/service-account-schemas.js';

const common = {
  401: 'No credentials, or an invalid, expired or revoked token (WWW-Authenticate: Bearer)',
  503: 'The token service or the audit trail is unavailable; nothing was changed',
};
const management = {
  ...common,
  403: 'Not a user with Account Admin (service-account tokens always), or a missing/mismatched X-CSRF-Token on a session request',
};
/** Actions that mint or remove credentials: a person with a second factor must have used it recently. */
const sensitive = {
  ...management,
  401: `${common[401]}; or, with \`error="insufficient_user_authentication"\` and \`acr_values\`/\`max_age\` (RFC 9470), the person must verify their second factor again (step-up: GET /step-up in the portal)`,
};
const unknown = 'Unknown in this tenant';

/** The documented operations, each registered with the schema objects its route validates with. */
export function accountAdminOperations(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerPath({
    method: 'get',
    path: '/me',
    summary: 'Who am I',
    operationId: 'getMe',
    responses: { 200: jsonResponse('The caller', MeSchema), ...errorResponses(common) },
  });
  registry.registerPath({
    method: 'get',
    path: '/service-accounts',
    summary: 'List service accounts (name order)',
    operationId: 'listServiceAccounts',
    responses: {
      200: jsonResponse("The tenant's service accounts", z.array(ServiceAccountSchema)),
      ...errorResponses(common),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/service-accounts',
    summary: 'Create a service account (role View); the secret is returned only here',
    operationId: 'createServiceAccount',
    request: { body: jsonRequestBody(CreateServiceAccountBody) },
    responses: {
      201: jsonResponse('Created; client_id and secret shown once', ServiceAccountWithSecretSchema),
      ...errorResponses({
        400: 'Invalid body',
        409: `A service account with this name exists, or the tenant has ${MAX_SERVICE_ACCOUNTS} (each with its own message)`,
        ...JSON_BODY_ERRORS,
        ...sensitive,
      }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/service-accounts/{client_id}',
    summary: 'Get a service account',
    operationId: 'getServiceAccount',
    request: { params: ServiceAccountPath },
    responses: {
      200: jsonResponse('The service account', ServiceAccountSchema),
      ...errorResponses({ 404: unknown, ...common }),
    },
  });
  registry.registerPath({
    method: 'patch',
    path: '/service-accounts/{client_id}',
    summary:
      "Change role, grants or the DPoP requirement (older tokens of the account are revoked), and/or the account's own grant quota (revokes nothing; needs a recent second factor)",
    operationId: 'updateServiceAccount',
    request: { params: ServiceAccountPath, body: jsonRequestBody(UpdateServiceAccountBody) },
    responses: {
      200: jsonResponse('Updated', ServiceAccountSchema),
      ...errorResponses({ 400: 'Invalid body', 404: unknown, ...sensitive }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/service-accounts/{client_id}',
    summary: 'Delete a service account; its tokens stop working',
    operationId: 'deleteServiceAccount',
    request: { params: ServiceAccountPath },
    responses: {
      204: { description: 'Deleted' },
      ...errorResponses({ 404: unknown, ...sensitive }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/service-accounts/{client_id}/reset-secret',
    summary: 'Replace the secret; the old one and older tokens stop working at once',
    operationId: 'resetServiceAccountSecret',
    request: { params: ServiceAccountPath },
    responses: {
      200: jsonResponse('The new secret, shown once', ServiceAccountWithSecretSchema),
      ...errorResponses({ 404: unknown, ...sensitive }),
    },
  });
  registerCredentialOperations(registry, { common, management: sensitive });
  registerCredentialPolicyOperations(registry, { common, management: sensitive });
  registerPeopleOperations(registry, { common });
  registerSessionOperations(registry, { common, management: sensitive });
  registerFactorOperations(registry, { common, management: sensitive });
  registry.registerPath({
    method: 'get',
    path: '/audit-events',
    summary: 'The audit trail, newest first; more pages via the Link rel="next" header',
    operationId: 'listAuditEvents',
    request: { query: AuditEventsQuery },
    responses: {
      200: jsonPageResponse(
        'A page of events',
        AuditEventSchema,
        '`<{portal_url}/api/v1/audit-events?limit=N&cursor=...>; rel="next"` when older events exist',
      ),
      ...errorResponses({ 400: 'Invalid limit or cursor', ...common }),
    },
  });
  return registry;
}

/** The OpenAPI 3.1 document served at /api/v1/openapi.json. */
export function openApiDocument(portalUrl: string): OpenApiDocument {
  return generateApiDocument(accountAdminOperations(), {
    title: 'Plant Store account admin API',
    version: '1.0.0',
    description:
      "Manage the service accounts and people of your Plant Store tenant. Authenticate with `Authorization: Bearer <access token>` from your tenant's realm " +
      '(audience `ACCOUNT_ADMIN_AUDIENCE`) or with the portal session, whose state-changing requests must send the csrf_token cookie value in X-CSRF-Token. ' +
      `Creating, resetting, deleting and changing service accounts needs a human user with the Account Admin role. At most ${MAX_SERVICE_ACCOUNTS} service accounts per tenant. ` +
      'People (`/users`, `/invitations`) are managed by Account Admins only; every change needs a second factor verified in the last 10 minutes where the person has one or the tenant requires one.',
    serverUrl: `${portalUrl.replace(/\/+$/, '')}/api/v1`,
    securitySchemes: {
      bearer: BEARER_JWT,
      session: { type: 'apiKey', in: 'cookie', name: 'aa_session' },
    },
  });
}
