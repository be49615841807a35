/**
 * account-admin's errors, every wing's in one catalogue (wings import them from platform/).
 * Each keeps its name and wire answer as before; the 503s set `expose: true`, the flag that
 * says the message may be shown to the caller.
 */
import { AppError, createError } from '@plant/shared/api';
import type { InternalApiError } from '@plant/shared/token-service-client';

export const ServiceAccountNotFound = createError(
  'ServiceAccountNotFound',
  404,
  'Service account not found',
);
export const TenantNotFound = createError('TenantNotFound', 404, 'Tenant not found');
/** A session handle that names no live session of the caller's (forged, another person's, ended). */
export const SessionNotFound = createError('SessionNotFound', 404, 'Session not found');
/** A person's id that names nobody in the caller's tenant (malformed ids included). */
export const PersonNotFound = createError('PersonNotFound', 404, 'User not found');
export const NotAccountAdmin = createError(
  'NotAccountAdmin',
  403,
  'Managing service accounts needs a signed-in user with the Account Admin role',
);
export const UserNotFound = createError('UserNotFound', 404, 'User not found');
export const InvitationNotFound = createError('InvitationNotFound', 404, 'Invitation not found');
export const NotAPerson = createError(
  'NotAPerson',
  403,
  'Second factors belong to people: a service account has none',
);
export const NotPeopleAdmin = createError(
  'NotPeopleAdmin',
  403,
  "Managing people's second factors and the tenant's policy needs a signed-in user with the Account Admin role",
);
/** A reset of a person who holds no factor and no recovery code: nothing would go, so nothing is done (or audited). */
export const NoFactorsToReset = createError(
  'NoFactorsToReset',
  409,
  'This person has no second factor and no recovery code to reset',
);
export const CsrfRejected = createError(
  'CsrfRejected',
  403,
  'Missing or invalid CSRF token: send the csrf_token cookie value in the X-CSRF-Token header',
);
export const NotSignedIn = createError(
  'NotSignedIn',
  401,
  'Authentication required: sign in to the portal or send Authorization: Bearer <access token>',
);

/** A change's `If-Match` names another state than the resource's (RFC 9110 §13.1.1): read it again. */
export const PreconditionFailed = createError(
  'PreconditionFailed',
  412,
  'The resource changed since the ETag you sent (If-Match): read it again, then retry',
);
export const InvalidIfMatch = createError(
  'InvalidIfMatch',
  400,
  'If-Match must be * or a comma-separated list of entity tags ("v7")',
);

/** RFC 9470: the acr the realm names for a sign-in in which a second factor was verified. */
export const FACTOR_ACR = 'urn:plantstore:acr:factor';
/** How long a verified second factor counts for sensitive actions (seconds). */
export const STEP_UP_MAX_AGE_SECONDS = 600;

/**
 * A sensitive action by a person whose second factor was last verified too long ago: 401 with
 * RFC 9470's challenge, so the portal (or any client) knows to run the realm's step-up and retry.
 */
export class StepUpRequired extends AppError {
  constructor(message = 'This action needs your second factor again') {
    super(401, message, {
      expose: true,
      headers: {
        'www-authenticate': `Bearer error="insufficient_user_authentication", error_description="${message}", acr_values="${FACTOR_ACR}", max_age=${STEP_UP_MAX_AGE_SECONDS}`,
      },
    });
    this.name = 'StepUpRequired';
  }
}

/** The token service could not be reached, timed out or failed: nothing was done (503, retry later). */
export class TokenServiceUnavailable extends AppError {
  constructor(
    message = 'The token service is temporarily unavailable; nothing was changed, try again',
    options: { cause?: unknown } = {},
  ) {
    super(503, message, { expose: true, headers: { 'retry-after': '1' }, cause: options.cause });
    this.name = 'TokenServiceUnavailable';
  }
}

/** The audit trail could not be written: the action was undone (create) or not attempted. */
export class AuditUnavailable extends AppError {
  constructor(
    message = 'The audit trail is temporarily unavailable; nothing was changed, try again',
    options: { cause?: unknown } = {},
  ) {
    super(503, message, { expose: true, headers: { 'retry-after': '1' }, cause: options.cause });
    this.name = 'AuditUnavailable';
  }
}

/** Redis (sessions, pending sign-ins) cannot be reached: 503, sign in or try again shortly. */
export class SessionStoreUnavailable extends AppError {
  constructor(options: { cause?: unknown } = {}) {
    super(503, 'Sessions are temporarily unavailable; try again', {
      expose: true,
      headers: { 'retry-after': '1' },
      cause: options.cause,
    });
    this.name = 'SessionStoreUnavailable';
  }
}

/**
 * The token service's internal API as account-admin answers it: no answer, a 5xx or a refused
 * internal token (a deployment fault, not the caller's) is a 503; other 4xx keep the token
 * service's status and message. The shared client calls this for every failure.
 */
export function toAdminError(err: InternalApiError): Error {
  const { status } = err;
  if (status === undefined || err.unavailable)
    return new TokenServiceUnavailable(undefined, { cause: err.cause ?? err });
  if (status === 412) return new PreconditionFailed();
  return new AppError(status, err.answerMessage ?? 'Request refused by the token service');
}
