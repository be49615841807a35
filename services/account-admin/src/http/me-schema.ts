/** The shape of `GET /me`, for the OpenAPI document. */
import { z } from 'zod';

/** `GET /me` builds this object in the route itself; there is no named type to tie it to. */
export const MeSchema = z
  .object({
    tenant: z.string(),
    sub: z.string(),
    email: z.string().nullable(),
    principal_type: z.enum(['user', 'service_account']),
    role: z.enum(['View', 'Edit', 'Account Admin']),
    can_manage_service_accounts: z.boolean(),
  })
  .meta({ id: 'Me' });
