import {
  boundedText,
  mailboxAddress,
  nameText,
  PLANT_TAG_MAX,
  TENANT_NAME_PATTERN,
} from '@plant/shared/api';
import {
  credentialPolicyFields,
  EMAIL_MAX,
  GrantQuotaSchema,
  grantsSchema,
  hasPolicyChange,
  POLICY_CHANGE_REQUIRED,
  PUBLIC_KEY_PEM_MAX,
  SERVICE_ACCOUNT_NAME_MAX,
  TRUST_FIELD_MAX,
  ServiceAccountRoleSchema,
} from '@plant/shared/token-service-client';
import { z } from 'zod';
import { Actor, ActorBodySchema } from '../platform/index.js';

export { isTenantName } from '@plant/shared/api';

export const TenantNameSchema = z.string().regex(TENANT_NAME_PATTERN, {
  error: 'tenant must be 1-63 characters of a-z, 0-9 and inner hyphens',
});

export const GrantSchema = z.object(
  {
    tag: nameText('tag', PLANT_TAG_MAX),
    permission: z.literal('edit', { error: 'permission must be "edit"' }),
  },
  { error: 'each grant must be an object {tag, permission}' },
);

export const GrantsSchema = grantsSchema(GrantSchema);

export const CreateServiceAccountSchema = z.object(
  {
    name: nameText('name', SERVICE_ACCOUNT_NAME_MAX),
    actor: Actor.optional(),
  },
  { error: 'body must be a JSON object' },
);

export const UpdateServiceAccountSchema = z
  .object(
    {
      role: ServiceAccountRoleSchema.optional(),
      grants: GrantsSchema.optional(),
      dpop_bound_access_tokens: z
        .boolean({ error: 'dpop_bound_access_tokens must be true or false' })
        .optional(),
      receive_signals: z.boolean({ error: 'receive_signals must be true or false' }).optional(),
      actor: Actor.optional(),
    },
    { error: 'body must be a JSON object' },
  )
  .refine(
    (body) =>
      body.role !== undefined ||
      body.grants !== undefined ||
      body.dpop_bound_access_tokens !== undefined ||
      body.receive_signals !== undefined,
    {
      error: 'role, grants, dpop_bound_access_tokens or receive_signals is required',
    },
  );

/** The realm's second-factor policy, as the internal API sets it. */
export const FactorPolicySchema = z.object(
  {
    require_admin_factor: z.boolean({ error: 'require_admin_factor must be true or false' }),
    actor: Actor.optional(),
  },
  { error: 'body must be a JSON object' },
);

/** "Add a secret": an optional expiry (ISO 8601 with a zone); the domain checks it lies ahead. */
export const AddSecretSchema = z.object(
  {
    expires_at: z.iso
      .datetime({ offset: true, error: 'expires_at must be an ISO 8601 date-time' })
      .optional(),
    actor: Actor.optional(),
  },
  { error: 'body must be a JSON object' },
);

export const UserRoleSchema = z.enum(['View', 'Edit', 'Account Admin'], {
  error: 'role must be "View", "Edit" or "Account Admin"',
});

/** A person's or an invitation's email: one strict mailbox (mailbox-address.ts in @plant/shared). */
export const EmailSchema = mailboxAddress('email', EMAIL_MAX);

export const PasswordSchema = z
  .string()
  .min(8, { error: 'password must be at least 8 characters' })
  .max(1024, { error: 'password must be at most 1024 characters' });

/** `{jwk}` or `{pem}`, exactly one; what the key itself must be is `importPublicKey`'s to say. */
export const AddKeySchema = ActorBodySchema.extend({
  jwk: z
    .record(z.string(), z.unknown(), { error: 'jwk must be a JSON object (a public JWK)' })
    .optional(),
  pem: z
    .string({ error: 'pem must be a string' })
    .max(PUBLIC_KEY_PEM_MAX, { error: `pem must be at most ${PUBLIC_KEY_PEM_MAX} characters` })
    .optional(),
}).refine((body) => (body.jwk === undefined) !== (body.pem === undefined), {
  error: 'give exactly one of jwk and pem',
});

export const AddTrustSchema = ActorBodySchema.extend({
  issuer: z
    .string({ error: 'issuer must be a string' })
    .min(1, { error: 'issuer is required' })
    .max(TRUST_FIELD_MAX, { error: `issuer must be at most ${TRUST_FIELD_MAX} characters` }),
  subject: boundedText('subject', TRUST_FIELD_MAX),
  audience: boundedText('audience', TRUST_FIELD_MAX),
});

export const UpdateCredentialPolicySchema = z
  .object(
    { ...credentialPolicyFields, actor: Actor.optional() },
    { error: 'body must be a JSON object' },
  )
  .refine(hasPolicyChange, { error: POLICY_CHANGE_REQUIRED });

export const SetQuotaSchema = z.object(
  { quota: GrantQuotaSchema.nullable(), actor: Actor.optional() },
  { error: 'body must be a JSON object' },
);

export const UserStatusSchema = z.enum(['active', 'disabled'], {
  error: 'status must be "active" or "disabled"',
});

/** `PATCH .../users/:id`: exactly one of a new role and a new status (each is its own audited action). */
export const UpdateUserSchema = z
  .object(
    {
      role: UserRoleSchema.optional(),
      status: UserStatusSchema.optional(),
      actor: Actor.optional(),
    },
    { error: 'body must be a JSON object' },
  )
  .refine((body) => (body.role === undefined) !== (body.status === undefined), {
    error: 'give exactly one of role and status',
  });

export const CreateInvitationSchema = z.object(
  { email: EmailSchema, role: UserRoleSchema, actor: Actor.optional() },
  { error: 'body must be a JSON object' },
);
