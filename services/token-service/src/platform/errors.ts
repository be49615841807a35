import { createError } from '@plant/shared/api';
import {
  MAX_KEYS_PER_SERVICE_ACCOUNT,
  MAX_PENDING_INVITATIONS,
  MAX_TRUSTS_PER_SERVICE_ACCOUNT,
} from '@plant/shared/token-service-client';

export const TenantNotFound = createError('TenantNotFound', 404, 'Tenant not found');
export const TenantExists = createError('TenantExists', 409, 'Tenant already exists');
export const ServiceAccountNotFound = createError(
  'ServiceAccountNotFound',
  404,
  'Service account not found',
);
export const ServiceAccountNameTaken = createError(
  'ServiceAccountNameTaken',
  409,
  'A service account with this name already exists',
);
export const ServiceAccountLimitReached = createError(
  'ServiceAccountLimitReached',
  409,
  'This tenant already has the maximum of 25 service accounts',
);
export const UserNotFound = createError('UserNotFound', 404, 'User not found');
export const UserEmailTaken = createError(
  'UserEmailTaken',
  409,
  'A user with this email already exists',
);
export const LastAccountAdmin = createError(
  'LastAccountAdmin',
  409,
  'This is the last active Account Admin of the tenant: make another person Account Admin first',
);
export const InvitationNotFound = createError('InvitationNotFound', 404, 'Invitation not found');
export const InvitationLimitReached = createError(
  'InvitationLimitReached',
  409,
  `This tenant already has the maximum of ${MAX_PENDING_INVITATIONS} pending invitations: revoke one, or wait until one is accepted or expires`,
);
export const FactorNotFound = createError('FactorNotFound', 404, 'Factor not found');
export const PrincipalNotFound = createError('PrincipalNotFound', 404, 'Principal not found');

const TooManyFailedAuthenticationsBase = createError(
  'TooManyFailedAuthentications',
  429,
  'too many failed client authentications; retry later',
);

/** A source (or a client) over its budget of failed client authentications. */
export class TooManyFailedAuthentications extends TooManyFailedAuthenticationsBase {
  constructor(readonly retryAfterSeconds: number) {
    super(undefined, { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

export const InvalidPublicKey = createError('InvalidPublicKey', 400, 'The public key is not valid');
export const InvalidTrust = createError('InvalidTrust', 400, 'The trust is not valid');
export const KeyNotFound = createError('KeyNotFound', 404, 'Key not found');
export const TrustNotFound = createError('TrustNotFound', 404, 'Trust not found');
export const KeyLimitReached = createError(
  'KeyLimitReached',
  409,
  `This service account already has the maximum of ${MAX_KEYS_PER_SERVICE_ACCOUNT} keys`,
);
export const DuplicateKey = createError(
  'DuplicateKey',
  409,
  'This service account already has this key (or a key with this id)',
);
export const TrustLimitReached = createError(
  'TrustLimitReached',
  409,
  `This service account already has the maximum of ${MAX_TRUSTS_PER_SERVICE_ACCOUNT} trusts`,
);
export const TrustedIssuerLimitReached = createError(
  'TrustedIssuerLimitReached',
  409,
  'This tenant already trusts the maximum number of issuers',
);
export const DuplicateTrust = createError(
  'DuplicateTrust',
  409,
  'This service account already has this trust',
);
export const SecretStillNeeded = createError(
  'SecretStillNeeded',
  409,
  "The secret is this service account's only credential: add a key or a trust before removing it",
);
export const NoSecret = createError(
  'NoSecret',
  409,
  'This service account has no secret; Reset Secret gives it one',
);

/** The presented secret is the account's, but older than the tenant's maximum secret age. */
export class SecretExpired extends Error {
  constructor(readonly expiredAt: Date) {
    super(`the client secret expired at ${expiredAt.toISOString()}; reset it to get a new one`);
    this.name = 'SecretExpired';
  }
}

/** The service account is over its grant quota (enforce mode): 429 with Retry-After. */
export class GrantQuotaExceeded extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    perMinute: number,
  ) {
    super(`the service account is over its quota of ${perMinute} grants per minute; retry later`);
    this.name = 'GrantQuotaExceeded';
  }
}

export const InvalidReportSignature = createError(
  'InvalidReportSignature',
  401,
  'The report signature is not valid',
);
export const SecretScanningOff = createError(
  'SecretScanningOff',
  404,
  'Secret scanning reports are not accepted here',
);
