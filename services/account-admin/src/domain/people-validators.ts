/** Edge validation of `/api/v1/users` and `/api/v1/invitations`: the bodies as the routes parse them and the OpenAPI document states them. */
import { EMAIL_MAX } from '@plant/shared/token-service-client';
import { z } from 'zod';
import { unknownFieldMessage } from './service-account-validators.js';

export const UserRoleBody = z
  .enum(['View', 'Edit', 'Account Admin'], {
    error: 'role must be "View", "Edit" or "Account Admin"',
  })
  .meta({ id: 'UserRole' });

export const UserStatusBody = z
  .enum(['active', 'disabled'], { error: 'status must be "active" or "disabled"' })
  .meta({ id: 'UserStatus' });

/** The token service's rule for an email: one @, a dot after it, no spaces or control characters. */
const EMAIL = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;

export const InviteBody = z
  .strictObject(
    {
      email: z
        .string({
          error: (issue) =>
            issue.input === undefined ? 'email is required' : 'email must be a string',
        })
        .max(EMAIL_MAX, { error: `email must be at most ${EMAIL_MAX} characters` })
        .regex(EMAIL, { error: 'email must be an email address' })
        .meta({ format: 'email' }),
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
