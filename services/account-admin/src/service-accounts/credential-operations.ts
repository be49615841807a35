/**
 * The OpenAPI operations of a service account's credentials (credential-routes.ts), registered
 * into the account admin API's document with the schema objects the routes parse with.
 */
import {
  errorResponses,
  JSON_BODY_ERRORS,
  jsonRequestBody,
  jsonResponse,
  type OpenAPIRegistry,
} from '@plant/shared/http';
import {
  MAX_KEYS_PER_SERVICE_ACCOUNT,
  MAX_TRUSTS_PER_SERVICE_ACCOUNT,
} from '@plant/shared/token-service-client';
import {
  AddKeyBody,
  AddSecretBody,
  AddTrustBody,
  ServiceAccountKeyPath,
  ServiceAccountSecretPath,
  ServiceAccountTrustPath,
} from './service-account-credential-validators.js';
import type { OperationErrors } from '../platform/index.js';
import { ServiceAccountPath } from './service-account-validators.js';
import {
  ServiceAccountCredentialsSchema,
  ServiceAccountKeySchema,
  ServiceAccountSchema,
  ServiceAccountSecretWithValueSchema,
  ServiceAccountTrustSchema,
} from './service-account-schemas.js';

// long: the OpenAPI registrations of this wing's operations, one registerPath entry each (data).
export function registerCredentialOperations(
  registry: OpenAPIRegistry,
  { common, management }: OperationErrors,
): void {
  const base = '/service-accounts/{client_id}';
  const unknown = 'Unknown in this tenant';
  registry.registerPath({
    method: 'get',
    path: `${base}/credentials`,
    summary:
      "A service account's credentials: the secret (its dates only), its keys and its trusted workloads",
    operationId: 'getServiceAccountCredentials',
    request: { params: ServiceAccountPath },
    responses: {
      200: jsonResponse('Its credentials', ServiceAccountCredentialsSchema),
      ...errorResponses({ 404: unknown, ...common }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: `${base}/keys`,
    summary:
      'Add a public key: the account may then authenticate with private_key_jwt (RFC 7523); nothing is revoked',
    operationId: 'addServiceAccountKey',
    request: { params: ServiceAccountPath, body: jsonRequestBody(AddKeyBody) },
    responses: {
      201: jsonResponse('Added', ServiceAccountKeySchema),
      ...errorResponses({
        400: 'Invalid body or key (private, too small, unsupported type)',
        404: unknown,
        409: `The key is there already, or the account has ${MAX_KEYS_PER_SERVICE_ACCOUNT} keys`,
        ...JSON_BODY_ERRORS,
        ...management,
      }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: `${base}/keys/{key_id}`,
    summary:
      'Remove a key; exactly the tokens it obtained are revoked (the account keeps its other credentials and their tokens)',
    operationId: 'removeServiceAccountKey',
    request: { params: ServiceAccountKeyPath },
    responses: {
      204: { description: 'Removed' },
      ...errorResponses({ 404: `${unknown} (the account or the key)`, ...management }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: `${base}/trusts`,
    summary:
      "Trust a workload: tokens of its platform's issuer with this subject and audience authenticate the account; nothing is revoked",
    operationId: 'addServiceAccountTrust',
    request: { params: ServiceAccountPath, body: jsonRequestBody(AddTrustBody) },
    responses: {
      201: jsonResponse('Added', ServiceAccountTrustSchema),
      ...errorResponses({
        400: 'Invalid body, or an issuer that is not an https URL on a public address',
        404: unknown,
        409: `The trust is there already, the account has ${MAX_TRUSTS_PER_SERVICE_ACCOUNT}, or the tenant trusts its maximum of issuers`,
        ...JSON_BODY_ERRORS,
        ...management,
      }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: `${base}/trusts/{trust_id}`,
    summary:
      'Remove a trusted workload; exactly the tokens it obtained are revoked (the account keeps its other credentials and their tokens)',
    operationId: 'removeServiceAccountTrust',
    request: { params: ServiceAccountTrustPath },
    responses: {
      204: { description: 'Removed' },
      ...errorResponses({ 404: `${unknown} (the account or the trust)`, ...management }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: `${base}/secret`,
    summary:
      'Remove every secret of an account that has a key or a trusted workload; exactly the tokens they obtained are revoked. Reset Secret gives one again',
    operationId: 'removeServiceAccountSecret',
    request: { params: ServiceAccountPath },
    responses: {
      204: { description: 'Removed' },
      ...errorResponses({
        404: unknown,
        409: 'The secret is its only credential, or it has none',
        ...management,
      }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: `${base}/secrets`,
    summary:
      'Add a second secret beside the first, shown once, optionally expiring; nothing is revoked (move the client to it, then remove the old one)',
    operationId: 'addServiceAccountSecret',
    request: { params: ServiceAccountPath, body: jsonRequestBody(AddSecretBody) },
    responses: {
      201: jsonResponse(
        'Added; the secret is shown this once',
        ServiceAccountSecretWithValueSchema,
      ),
      ...errorResponses({
        400: 'Invalid body, or an expiry not in the future or more than 730 days ahead',
        404: unknown,
        409: 'The account has two live secrets already (SecretLimitReached)',
        ...JSON_BODY_ERRORS,
        ...management,
      }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: `${base}/secrets/{secret_id}`,
    summary:
      'Remove one secret; exactly the tokens it obtained are revoked, at once on every replica: the other secret, keys and trusts, and their tokens, keep working',
    operationId: 'removeServiceAccountSecretById',
    request: { params: ServiceAccountSecretPath },
    responses: {
      204: { description: 'Removed' },
      ...errorResponses({
        404: `${unknown} (the account or the secret)`,
        409: "The secret is the account's only credential",
        ...management,
      }),
    },
  });
  for (const disabled of [true, false]) {
    registry.registerPath({
      method: 'post',
      path: `${base}/${disabled ? 'disable' : 'enable'}`,
      summary: disabled
        ? 'Disable: its tokens are refused at their next check and no credential works until it is enabled'
        : 'Enable a disabled account: its credentials work again',
      operationId: disabled ? 'disableServiceAccount' : 'enableServiceAccount',
      request: { params: ServiceAccountPath },
      responses: {
        200: jsonResponse('The account', ServiceAccountSchema),
        ...errorResponses({ 404: unknown, ...management }),
      },
    });
  }
}
