/**
 * The shapes the account admin API answers with, for the OpenAPI document. Each is tied at
 * compile time to the type the code answers with (`responseSchema<T>()`), and the component
 * tests validate the real answers against the served document.
 */
import { responseSchema, ServiceAccountRoleSchema, type ServiceAccount, type ServiceAccountWithSecret } from '@plant/shared';
import { z } from 'zod';
import type { AuditEvent } from '../../domain/list-audit-events.js';
import { GrantBody } from '../../domain/service-account-validators.js';

export const ServiceAccountSchema = responseSchema<ServiceAccount>()(
  z
    .object({
      name: z.string(),
      client_id: z.string(),
      role: ServiceAccountRoleSchema,
      grants: z.array(GrantBody),
      dpop_bound_access_tokens: z.boolean().meta({ description: 'Tokens only with a DPoP proof (RFC 9449), bound to its key; off by default' }),
      created_at: z.iso.datetime(),
      created_by: z.string().nullable(),
      last_used_at: z.iso.datetime().nullable(),
    })
    .meta({ id: 'ServiceAccount' }),
);

export const ServiceAccountWithSecretSchema = responseSchema<ServiceAccountWithSecret>()(
  ServiceAccountSchema.extend({ secret: z.string() }).meta({ id: 'ServiceAccountWithSecret' }),
);

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

/**
 * `AuditEvent.action` is a plain string in the domain while the document names the four
 * actions, so the tie is one way: the schema describes every field of the type.
 */
export const AuditEventSchema = z
  .object({
    id: z.string(),
    occurred_at: z.iso.datetime(),
    actor_sub: z.string(),
    actor_email: z.string().nullable(),
    actor_type: z.enum(['user', 'service_account']),
    action: z.enum(['service_account.create', 'service_account.update', 'service_account.reset_secret', 'service_account.delete']),
    client_id: z.string(),
    name: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).meta({ description: 'Non-secret facts of the change, e.g. {role: {from, to}}' }),
    request_id: z.string().nullable(),
    address: z.string().nullable(),
  })
  .meta({ id: 'AuditEvent' }) satisfies z.ZodType<AuditEvent>;
