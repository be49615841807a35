import { boundedText, PLANT_TAG_MAX } from '@plant/shared';
import { z } from 'zod';

/** DNS-label-like tenant names (docs/architecture.md). */
export const TENANT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const SERVICE_ACCOUNT_NAME_MAX = 64;
export const MAX_SERVICE_ACCOUNTS = 25;
export const MAX_GRANTS = 50;
export const ACTOR_MAX = 320;

export function isTenantName(value: string): boolean {
  return TENANT_NAME.test(value);
}

export const TenantNameSchema = z.string().regex(TENANT_NAME, {
  error: 'tenant must be 1-63 characters of a-z, 0-9 and inner hyphens',
});

const Actor = boundedText('actor', ACTOR_MAX);

export const GrantSchema = z.object(
  {
    tag: boundedText('tag', PLANT_TAG_MAX),
    permission: z.literal('edit', { error: 'permission must be "edit"' }),
  },
  { error: 'each grant must be an object {tag, permission}' },
);

export const GrantsSchema = z
  .array(GrantSchema, { error: 'grants must be an array' })
  .max(MAX_GRANTS, { error: `grants must have at most ${MAX_GRANTS} entries` })
  .refine((grants) => new Set(grants.map((g) => g.tag)).size === grants.length, { error: 'grants must not repeat a tag' });

export const CreateServiceAccountSchema = z.object(
  {
    name: boundedText('name', SERVICE_ACCOUNT_NAME_MAX),
    actor: Actor.optional(),
  },
  { error: 'body must be a JSON object' },
);

export const UpdateServiceAccountSchema = z
  .object(
    {
      role: z.enum(['View', 'Edit'], { error: 'role must be "View" or "Edit"' }).optional(),
      grants: GrantsSchema.optional(),
      actor: Actor.optional(),
    },
    { error: 'body must be a JSON object' },
  )
  .refine((body) => body.role !== undefined || body.grants !== undefined, { error: 'role or grants is required' });

export const ActorBodySchema = z.object({ actor: Actor.optional() }, { error: 'body must be a JSON object' });

export const UserRoleSchema = z.enum(['View', 'Edit', 'Account Admin'], { error: 'role must be "View", "Edit" or "Account Admin"' });

export const EmailSchema = z
  .string()
  .max(254, { error: 'email must be at most 254 characters' })
  .regex(/^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u, { error: 'email must be an email address' });

export const PasswordSchema = z
  .string()
  .min(8, { error: 'password must be at least 8 characters' })
  .max(1024, { error: 'password must be at most 1024 characters' });
