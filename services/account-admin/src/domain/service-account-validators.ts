import { boundedText, grantsSchema, PLANT_TAG_MAX, SERVICE_ACCOUNT_NAME_MAX, ServiceAccountRoleSchema } from '@plant/shared';
import { z } from 'zod';

const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** A path id that cannot be a client_id cannot name an existing account: 404, never 400. */
export function isClientId(value: string): boolean {
  return CLIENT_ID.test(value);
}

/** A required text field whose absence reads "<field> is required". */
function requiredText(field: string, max: number) {
  return z.string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) }).pipe(boundedText(field, max));
}

export const CreateServiceAccountBody = z.strictObject(
  { name: requiredText('name', SERVICE_ACCOUNT_NAME_MAX) },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `Unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}; the body is {name}` : 'Body must be a JSON object {name}') },
);
export type CreateServiceAccountInput = z.output<typeof CreateServiceAccountBody>;

export const GrantBody = z.strictObject(
  {
    tag: requiredText('tag', PLANT_TAG_MAX),
    permission: z.literal('edit', { error: 'permission must be "edit"' }),
  },
  { error: 'each grant must be an object {tag, permission: "edit"}' },
);

export const UpdateServiceAccountBody = z
  .strictObject(
    {
      role: ServiceAccountRoleSchema.optional(),
      grants: grantsSchema(GrantBody).optional(),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? `Unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}; the body is {role?, grants?}` : 'Body must be a JSON object {role?, grants?}') },
  )
  .refine((body) => body.role !== undefined || body.grants !== undefined, { error: 'role or grants is required' });
export type UpdateServiceAccountInput = z.output<typeof UpdateServiceAccountBody>;

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 100;
