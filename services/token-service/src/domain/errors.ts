import { createError } from '@plant/shared';

export const TenantNotFound = createError('TenantNotFound', 404, 'Tenant not found');
export const TenantExists = createError('TenantExists', 409, 'Tenant already exists');
export const ServiceAccountNotFound = createError('ServiceAccountNotFound', 404, 'Service account not found');
export const ServiceAccountNameTaken = createError('ServiceAccountNameTaken', 409, 'A service account with this name already exists');
export const ServiceAccountLimitReached = createError('ServiceAccountLimitReached', 409, 'This tenant already has the maximum of 25 service accounts');
export const UserNotFound = createError('UserNotFound', 404, 'User not found');
export const UserEmailTaken = createError('UserEmailTaken', 409, 'A user with this email already exists');
export const PrincipalNotFound = createError('PrincipalNotFound', 404, 'Principal not found');
