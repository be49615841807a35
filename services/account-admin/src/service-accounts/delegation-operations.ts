/**
 * The OpenAPI operations of a service account's permissions to act for others
 * (delegation-routes.ts), registered with the schema objects the routes parse with.
 */
import {
  errorResponses,
  JSON_BODY_ERRORS,
  jsonRequestBody,
  jsonResponse,
  responseSchema,
  type OpenAPIRegistry,
} from '@plant/shared/http';
import type { Delegation } from '@plant/shared/token-service-client';
import { z } from 'zod';
import type { OperationErrors } from '../platform/index.js';
import { SetDelegationsBody } from './delegation-routes.js';
import { ServiceAccountPath } from './service-account-validators.js';

const DelegationSchema = responseSchema<Delegation>()(
  z
    .object({
      audience: z
        .string()
        .meta({ description: 'The API the account may call on behalf of others' }),
      scope: z
        .string()
        .meta({ description: 'The most it may delegate there: plants:read, plants:write or both' }),
      created_at: z.string().nullable(),
      created_by: z.string().nullable(),
    })
    .meta({ id: 'Delegation' }),
);
const DelegationsSchema = z
  .object({ delegations: z.array(DelegationSchema) })
  .meta({ id: 'Delegations' });

export function registerDelegationOperations(
  registry: OpenAPIRegistry,
  { common, management }: OperationErrors,
): void {
  const path = '/service-accounts/{client_id}/delegations';
  registry.registerPath({
    method: 'get',
    path,
    summary:
      'Where the service account may act for others (token exchange, RFC 8693): target audiences and the most scope it may delegate at each',
    operationId: 'getServiceAccountDelegations',
    request: { params: ServiceAccountPath },
    responses: {
      200: jsonResponse('Its permissions', DelegationsSchema),
      ...errorResponses({ 404: 'Unknown in this tenant', ...common }),
    },
  });
  registry.registerPath({
    method: 'put',
    path,
    summary:
      "Put the whole set of the account's permissions to act for others in place; removing an audience or a scope revokes the account's older tokens, the exchanged ones among them",
    operationId: 'setServiceAccountDelegations',
    request: { params: ServiceAccountPath, body: jsonRequestBody(SetDelegationsBody) },
    responses: {
      200: jsonResponse('The permissions now', DelegationsSchema),
      ...errorResponses({
        400: 'Invalid body, an audience that is not an API of this platform, or a scope other than plants:read and plants:write',
        404: 'Unknown in this tenant',
        ...JSON_BODY_ERRORS,
        ...management,
      }),
    },
  });
}
