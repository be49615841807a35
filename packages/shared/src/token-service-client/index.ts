/** The token service's internal API: its client, error, types and revocation messages. */
export {
  InternalApiError,
  type InternalApiErrorOptions,
  type InternalApiTarget,
} from '../internal-api-request.js';
export * from '../internal-api-types.js';
export * from '../revocation-entry.js';
export * from '../token-service-client.js';
