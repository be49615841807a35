/**
 * The OpenAPI operations of the service accounts themselves (service-account-routes.ts),
 * registered into the account admin API's document with the schema objects the routes parse with.
 */
import {
  errorResponses,
  JSON_BODY_ERRORS,
  jsonRequestBody,
  jsonResponse,
  type OpenAPIRegistry,
} from '@plant/shared/http';
import { MAX_SERVICE_ACCOUNTS } from '@plant/shared/token-service-client';
import { z } from 'zod';
import type { OperationErrors } from '../platform/index.js';
import { ServiceAccountSchema, ServiceAccountWithSecretSchema } from './service-account-schemas.js';
import {
  CreateServiceAccountBody,
  ServiceAccountPath,
  UpdateServiceAccountBody,
} from './service-account-validators.js';

const unknown = 'Unknown in this tenant';

/** `management` here is the errors of a sensitive action (it needs a recent second factor). */
export function registerServiceAccountOperations(
  registry: OpenAPIRegistry,
  { common, management }: OperationErrors,
): void {
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
        ...management,
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
      ...errorResponses({ 400: 'Invalid body', 404: unknown, ...management }),
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
      ...errorResponses({ 404: unknown, ...management }),
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
      ...errorResponses({ 404: unknown, ...management }),
    },
  });
}
