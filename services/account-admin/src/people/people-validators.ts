/** Edge validation of `/api/v1/users` and `/api/v1/invitations`: the bodies as the routes parse them and the OpenAPI document states them. */
import { BadRequest, mailboxAddress, pageLimit } from '@plant/shared/api';
import { EMAIL_MAX, INVITATION_PAGE_MAX } from '@plant/shared/token-service-client';
import { z } from 'zod';
import { unknownFieldMessage } from '../platform/index.js';

export const UserRoleBody = z
  .enum(['View', 'Edit', 'Account Admin'], {
    error: 'role must be "View", "Edit" or "Account Admin"',
  })
  .meta({ id: 'UserRole' });

export const UserStatusBody = z
  .enum(['active', 'disabled'], { error: 'status must be "active" or "disabled"' })
  .meta({ id: 'UserStatus' });

export const InviteBody = z
  .strictObject(
    {
      // The token service's rule (mailbox-address.ts): the name text rule, then one strict mailbox.
      email: mailboxAddress('email', EMAIL_MAX),
      role: UserRoleBody,
    },
    { error: unknownFieldMessage('{email, role}') },
  )
  .meta({ id: 'NewInvitation' });
export type InviteInput = z.output<typeof InviteBody>;

export const UpdateUserBody = z
  .strictObject(
    { role: UserRoleBody.optional(), status: UserStatusBody.optional() },
    { error: unknownFieldMessage('{role} or {status}') },
  )
  .refine((body) => (body.role === undefined) !== (body.status === undefined), {
    error: 'give exactly one of role and status',
  })
  .meta({ id: 'UserChange', minProperties: 1, maxProperties: 1 });
export type UpdateUserInput = z.output<typeof UpdateUserBody>;

const ID = /^[A-Za-z0-9-]{1,64}$/;

/** A path id that cannot be a person's or an invitation's id names nothing: 404, never 400. */
export function isPeopleId(value: string): boolean {
  return ID.test(value);
}

export const UserPath = z.object({ id: z.string().max(64).regex(ID) });

export const INVITATION_PAGE_DEFAULT = 50;

/** `limit` of `GET /invitations`: the route parses with it and the OpenAPI document states it. */
const INVITATION_LIMIT = pageLimit(
  INVITATION_PAGE_MAX,
  INVITATION_PAGE_DEFAULT,
  'Maximum number of invitations to return',
);

/** The query of `GET /invitations` as documented; `parseInvitationsQuery` parses it. */
export const InvitationsQueryParams = z.object({
  limit: INVITATION_LIMIT.schema,
  cursor: z
    .string()
    .optional()
    .meta({ param: { description: "Opaque position from a previous page's `Link` header" } }),
});

export interface InvitationsQuery {
  limit: number;
  cursor?: string;
}

const CURSOR_MESSAGE = 'cursor is not valid: use the Link header of the previous page';
/** The token service makes the cursor and checks it; here only its shape, so nothing else reaches its URL. */
const CURSOR_LITERAL = /^[A-Za-z0-9_-]{1,64}$/;

/** `limit` (1..100, default 50) and `cursor` as given in the query string; otherwise 400. */
export function parseInvitationsQuery(query: Record<string, unknown>): InvitationsQuery {
  const limit = INVITATION_LIMIT.parse(query);
  const { cursor } = query;
  if (cursor === undefined) return { limit };
  if (typeof cursor !== 'string' || !CURSOR_LITERAL.test(cursor))
    throw new BadRequest(CURSOR_MESSAGE);
  return { limit, cursor };
}
