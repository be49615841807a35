/** The token service's internal API: its client, error, types and revocation messages. */
export {
  InternalApiError,
  type InternalApiErrorOptions,
  type InternalApiTarget,
} from '@plant/resource-auth/platform/internal-api-request';
export * from './internal-api-types.js';
export * from '@plant/resource-auth/platform/revocation-entry';
export * from './token-service-client.js';
