/**
 * The shapes the People routes answer with.
 * For the OpenAPI document: tied at compile time to the type the code answers with
 * (`responseSchema<T>()`), and the component tests validate the real answers against it.
 */
import { responseSchema } from '@plant/shared/http';
import type { Invitation } from '@plant/shared/token-service-client';
import { z } from 'zod';
import type { InvitationAnswer, Person } from './people.js';
import { UserRoleBody, UserStatusBody } from './people-validators.js';

export const UserSchema = responseSchema<Person>()(
  z
    .object({
      id: z.string(),
      email: z.string(),
      role: UserRoleBody,
      status: UserStatusBody.meta({
        description: 'A disabled person cannot sign in and their sessions and tokens are refused',
      }),
      created_at: z.iso.datetime(),
      last_sign_in_at: z.iso.datetime().nullable(),
      factors: z
        .object({
          passkeys: z.int().min(0),
          totp: z.boolean().meta({ description: 'An authenticator app (TOTP) is set up' }),
          recovery_codes_left: z.int().min(0),
        })
        .meta({ description: 'The second factors enrolled (counts only, never a factor)' }),
    })
    .meta({ id: 'User' }),
);

export const InvitationSchema = responseSchema<Invitation>()(
  z
    .object({
      id: z.string(),
      email: z.string(),
      role: UserRoleBody,
      created_at: z.iso.datetime(),
      created_by: z.string().nullable(),
      expires_at: z.iso.datetime(),
    })
    .meta({ id: 'Invitation' }),
);

export const InvitationCreatedSchema = responseSchema<InvitationAnswer>()(
  z
    .object({
      invitation: InvitationSchema.extend({
        url: z.string().meta({
          description:
            'The single-use link (it carries the invitation token): shown here only, never again',
        }),
      }),
      email: z.enum(['sent', 'failed', 'not_configured']).meta({
        description:
          'Whether the link was e-mailed: sent, failed (send the link yourself) or not_configured (no SMTP_URL)',
      }),
    })
    .meta({ id: 'InvitationCreated' }),
);
