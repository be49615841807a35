import { createError } from '@plant/shared';

export const TenantNotFound = createError('TenantNotFound', 404, 'Tenant not found');
export const TenantExists = createError('TenantExists', 409, 'Tenant already exists');
export const ServiceAccountNotFound = createError('ServiceAccountNotFound', 404, 'Service account not found');
export const ServiceAccountNameTaken = createError('ServiceAccountNameTaken', 409, 'A service account with this name already exists');
export const ServiceAccountLimitReached = createError('ServiceAccountLimitReached', 409, 'This tenant already has the maximum of 25 service accounts');
export const UserNotFound = createError('UserNotFound', 404, 'User not found');
export const UserEmailTaken = createError('UserEmailTaken', 409, 'A user with this email already exists');
export const PrincipalNotFound = createError('PrincipalNotFound', 404, 'Principal not found');

const TooManyFailedAuthenticationsBase = createError('TooManyFailedAuthentications', 429, 'too many failed client authentications; retry later');

/** A source (or a client) over its budget of failed client authentications. */
export class TooManyFailedAuthentications extends TooManyFailedAuthenticationsBase {
  constructor(readonly retryAfterSeconds: number) {
    super(undefined, { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}
