/** The OpenAPI operations of `/users` and `/invitations` (people-routes.ts). */
import {
  errorResponses,
  JSON_BODY_ERRORS,
  jsonPageResponse,
  jsonRequestBody,
  jsonResponse,
  type OpenAPIRegistry,
} from '@plant/shared/http';
import { MAX_PENDING_INVITATIONS } from '@plant/shared/token-service-client';
import { z } from 'zod';
import {
  InvitationsQueryParams,
  InviteBody,
  UpdateUserBody,
  UserPath,
} from './people-validators.js';
import { InvitationCreatedSchema, InvitationSchema, UserSchema } from './people-schemas.js';

// long: the OpenAPI registrations of this wing's operations, one registerPath entry each (data).
export function registerPeopleOperations(
  registry: OpenAPIRegistry,
  { common }: { common: Record<number, string> },
): void {
  const people = {
    ...common,
    401: `${common[401]}; or a change without a second factor verified in the last 10 minutes (WWW-Authenticate: Bearer error="insufficient_user_authentication", RFC 9470)`,
    403: 'Not a person with the Account Admin role (service-account tokens always), or a missing/mismatched X-CSRF-Token on a session request',
  };
  const unknown = 'Unknown in this tenant';
  const lastAdmin =
    'The last active Account Admin of the tenant cannot be demoted, disabled or removed';
  registry.registerPath({
    method: 'get',
    path: '/users',
    summary: "List the tenant's people (email order)",
    operationId: 'listUsers',
    responses: {
      200: jsonResponse("The tenant's people", z.array(UserSchema)),
      ...errorResponses(people),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/users',
    summary:
      'Invite a person: a single-use link (shown only here) that expires, e-mailed when SMTP is configured',
    operationId: 'inviteUser',
    request: { body: jsonRequestBody(InviteBody) },
    responses: {
      201: jsonResponse('Invited; the link is shown once', InvitationCreatedSchema),
      ...errorResponses({
        400: 'Invalid body: the email must be one mailbox local@domain in ASCII (no display name, list, group, comment or quotes) without control or invisible characters',
        409: `A person with this email exists, or the tenant has ${MAX_PENDING_INVITATIONS} pending invitations (each with its own message)`,
        ...JSON_BODY_ERRORS,
        ...people,
      }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/users/{id}',
    summary: 'Get a person',
    operationId: 'getUser',
    request: { params: UserPath },
    responses: {
      200: jsonResponse('The person', UserSchema),
      ...errorResponses({ 404: unknown, ...people }),
    },
  });
  registry.registerPath({
    method: 'patch',
    path: '/users/{id}',
    summary:
      "Change a person's role or status (one of them); their sessions and tokens are re-checked at once",
    operationId: 'updateUser',
    request: { params: UserPath, body: jsonRequestBody(UpdateUserBody) },
    responses: {
      200: jsonResponse('Changed', UserSchema),
      ...errorResponses({
        400: 'Invalid body',
        404: unknown,
        409: lastAdmin,
        ...JSON_BODY_ERRORS,
        ...people,
      }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/users/{id}',
    summary: 'Remove a person with their second factors; they lose access at once',
    operationId: 'deleteUser',
    request: { params: UserPath },
    responses: {
      204: { description: 'Removed' },
      ...errorResponses({ 404: unknown, 409: lastAdmin, ...people }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/invitations',
    summary:
      'List pending invitations (newest first), a page at a time; more pages via the Link rel="next" header; links are never shown again',
    operationId: 'listInvitations',
    request: { query: InvitationsQueryParams },
    responses: {
      200: jsonPageResponse(
        'A page of pending invitations',
        InvitationSchema,
        '`<{portal_url}/api/v1/invitations?limit=N&cursor=...>; rel="next"` when older invitations are pending',
      ),
      ...errorResponses({ 400: 'Invalid limit or cursor', ...people }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/invitations/{id}',
    summary: 'Revoke a pending invitation; its link stops working',
    operationId: 'revokeInvitation',
    request: { params: UserPath },
    responses: {
      204: { description: 'Revoked' },
      ...errorResponses({ 404: unknown, ...people }),
    },
  });
}
