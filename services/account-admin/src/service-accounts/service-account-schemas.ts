/**
 * The shapes the account admin API answers with, for the OpenAPI document. Each is tied at
 * compile time to the type the code answers with (`responseSchema<T>()`), and the component
 * tests validate the real answers against the served document.
 */
import { responseSchema } from '@plant/shared/http';
import {
  type Invitation,
  ServiceAccountRoleSchema,
  type CredentialPolicy,
  type SecretLeak,
  type ServiceAccount,
  type ServiceAccountCredentials,
  type ServiceAccountKey,
  type ServiceAccountTrust,
  type ServiceAccountWithSecret,
} from '@plant/shared/token-service-client';
import { z } from 'zod';
import { AUDIT_ACTIONS, type AuditEvent } from '../audit/list-audit-events.js';
import type { InvitationAnswer, Person } from '../people/people.js';
import { UserRoleBody, UserStatusBody } from '../people/people-validators.js';
import { GrantBody, GrantQuotaBody } from './service-account-validators.js';

export const ServiceAccountSchema = responseSchema<ServiceAccount>()(
  z
    .object({
      name: z.string(),
      client_id: z.string(),
      role: ServiceAccountRoleSchema,
      grants: z.array(GrantBody),
      dpop_bound_access_tokens: z.boolean().meta({
        description: 'Tokens only with a DPoP proof (RFC 9449), bound to its key; off by default',
      }),
      receive_signals: z.boolean().meta({
        description:
          'May receive Shared Signals (SSF): its client-credentials grant may then ask for the scopes ssf.manage and ssf.read; off by default',
      }),
      created_at: z.iso.datetime(),
      created_by: z.string().nullable(),
      last_used_at: z.iso.datetime().nullable(),
      disabled: z.boolean().meta({
        description:
          'A disabled account gets no token and its tokens are refused until it is enabled',
      }),
      disabled_at: z.iso.datetime().nullable(),
      secret_expires_at: z.iso.datetime().nullable().meta({
        description:
          "When the secret stops working under the tenant's maximum secret age; null: no secret, or no maximum",
      }),
      quota: GrantQuotaBody.nullable().meta({
        description: "This account's own grant quota; null: the tenant's default applies",
      }),
    })
    .meta({ id: 'ServiceAccount' }),
);

const credentialDates = {
  created_at: z.iso.datetime(),
  created_by: z.string().nullable(),
  last_used_at: z.iso.datetime().nullable(),
};

export const ServiceAccountKeySchema = responseSchema<ServiceAccountKey>()(
  z
    .object({
      id: z.string().meta({ description: 'The kid its client assertions name' }),
      alg: z.string(),
      thumbprint: z.string().meta({ description: 'RFC 7638 (SHA-256, base64url)' }),
      ...credentialDates,
    })
    .meta({ id: 'ServiceAccountKey' }),
);

export const ServiceAccountTrustSchema = responseSchema<ServiceAccountTrust>()(
  z
    .object({
      id: z.string(),
      issuer: z.string(),
      subject: z.string(),
      audience: z.string(),
      ...credentialDates,
    })
    .meta({ id: 'ServiceAccountTrust' }),
);

export const SecretLeakSchema = responseSchema<SecretLeak>()(
  z
    .object({
      url: z.string().meta({ description: 'Where the secret was found' }),
      source: z
        .string()
        .meta({ description: 'What held it (content, commit, issue_comment, ...)' }),
      reporter: z.string(),
      action: z.enum(['revoked', 'notified']),
      reported_at: z.iso.datetime(),
      secret_current: z.boolean().meta({
        description: 'The leaked secret still works (reported only, not reset since): reset it',
      }),
    })
    .meta({ id: 'SecretLeak' }),
);

export const CredentialPolicySchema = responseSchema<CredentialPolicy>()(
  z
    .object({
      secret_max_age_days: z.number().int().min(1).max(730).nullable(),
      leak_response: z.enum(['revoke', 'notify']),
      default_quota: GrantQuotaBody,
      updated_at: z.iso.datetime().nullable(),
      updated_by: z.string().nullable(),
    })
    .meta({ id: 'CredentialPolicy' }),
);

export const ServiceAccountCredentialsSchema = responseSchema<ServiceAccountCredentials>()(
  z
    .object({
      client_id: z.string(),
      disabled: z.boolean(),
      secret: z
        .object({
          created_at: z.iso.datetime(),
          last_used_at: z.iso.datetime().nullable(),
          expires_at: z.iso.datetime().nullable(),
        })
        .nullable()
        .meta({ description: 'Only its dates: the secret itself is never stored' }),
      keys: z.array(ServiceAccountKeySchema),
      trusts: z.array(ServiceAccountTrustSchema),
      leaks: z.array(SecretLeakSchema).meta({
        description:
          'Where its secrets were reported leaked (GitHub secret scanning), latest first',
      }),
    })
    .meta({ id: 'ServiceAccountCredentials' }),
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
 * `AuditEvent.action` is a plain string in the domain while the document names every action
 * (the audit repository's AUDIT_ACTIONS), so the tie is one way: the schema describes every field of the type.
 */
export const AuditEventSchema = z
  .object({
    id: z.string(),
    occurred_at: z.iso.datetime(),
    actor_sub: z.string(),
    actor_email: z.string().nullable(),
    actor_type: z.enum(['user', 'service_account']),
    action: z.string().meta({
      description: `What happened. Account admin's actions: ${AUDIT_ACTIONS.join(', ')}. The realm's own events (prefixed ids \`realm-<n>\`): invitation.accept, and the second-factor events the realm records`,
      examples: ['user.invite', 'invitation.accept'],
    }),
    target_type: z.enum(['service_account', 'user', 'invitation', 'session']).meta({
      description: 'What client_id names: a service account, a person, an invitation or a session',
    }),
    client_id: z.string().meta({ description: "The target's id (kept under this name)" }),
    name: z.string().nullable(),
    details: z
      .record(z.string(), z.unknown())
      .meta({ description: 'Non-secret facts of the change, e.g. {role: {from, to}}' }),
    request_id: z.string().nullable(),
    address: z.string().nullable(),
  })
  .meta({ id: 'AuditEvent' }) satisfies z.ZodType<AuditEvent>;

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
