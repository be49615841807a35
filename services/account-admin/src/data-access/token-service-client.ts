/**
 * account-admin's use of the one client of the token service's internal API (`@plant/shared`).
 * Every call has a timeout and carries the request id; a network failure, timeout, 5xx or a
 * refused internal token becomes `TokenServiceUnavailable` (503), and other 4xx answers keep
 * the token service's status and message.
 */
import { AppError, TokenServiceClient, type InternalApiError } from '@plant/shared';
import { TokenServiceUnavailable } from '../domain/errors.js';

export { TokenServiceClient } from '@plant/shared';

export interface TokenServiceClientOptions {
  baseUrl: string;
  internalToken: string;
  /** Per call, ms (default 5000). */
  timeoutMs?: number;
}

function toAdminError(err: InternalApiError): Error {
  const { status } = err;
  if (status === undefined || err.unavailable) return new TokenServiceUnavailable(undefined, { cause: err.cause ?? err });
  return new AppError(status, err.answerMessage ?? 'Request refused by the token service');
}

export function createTokenServiceClient(options: TokenServiceClientOptions): TokenServiceClient {
  return new TokenServiceClient({ ...options, mapError: toAdminError });
}
