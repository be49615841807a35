/**
 * The shapes the service-account routes answer with, for the OpenAPI document (each wing keeps
 * its own beside its routes). Each is tied at
 * compile time to the type the code answers with (`responseSchema<T>()`), and the component
 * tests validate the real answers against the served document.
 */
import { responseSchema } from '@plant/shared/http';
import {
  ServiceAccountRoleSchema,
  type SecretLeak,
  type ServiceAccount,
  type ServiceAccountCredentials,
  type ServiceAccountKey,
  type ServiceAccountSecret,
  type ServiceAccountSecretWithValue,
  type ServiceAccountTrust,
  type ServiceAccountWithSecret,
} from '@plant/shared/token-service-client';
import { z } from 'zod';
import { GrantQuotaBody } from '../credential-policy/index.js';
import { GrantBody } from './service-account-validators.js';

/** The public body: the revision is the `ETag` header (platform/etag.ts), not a field. */
export const ServiceAccountSchema = responseSchema<Omit<ServiceAccount, 'revision'>>()(
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
        description: "The service account's own grant quota; null: the tenant's default applies",
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

export const ServiceAccountSecretSchema = responseSchema<ServiceAccountSecret>()(
  z
    .object({
      id: z.string().meta({
        description:
          'Names the secret: removing it, and the `cred` claim (`secret:<id>`) of its tokens',
      }),
      expires_at: z.iso.datetime().nullable().meta({
        description:
          "When it stops working: its own expiry or the tenant's maximum secret age, whichever is first; null: never",
      }),
      ...credentialDates,
    })
    .meta({ id: 'ServiceAccountSecret' }),
);

export const ServiceAccountSecretWithValueSchema = responseSchema<ServiceAccountSecretWithValue>()(
  ServiceAccountSecretSchema.extend({
    secret: z.string().meta({ description: 'The new secret: shown this once, never again' }),
  }).meta({ id: 'ServiceAccountSecretWithValue' }),
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
      secret_id: z.string().nullable().meta({
        description:
          "Which of the account's secrets leaked (its id); null for reports from before secrets had ids",
      }),
    })
    .meta({ id: 'SecretLeak' }),
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
        .meta({
          description:
            'The newest secret, only its dates (the secret itself is never stored); `secrets` lists each',
        }),
      secrets: z.array(ServiceAccountSecretSchema).max(2).meta({
        description:
          'Every secret, oldest first: at most two live. A token names the one that obtained it (`cred`: `secret:<id>`)',
      }),
      keys: z.array(ServiceAccountKeySchema),
      trusts: z.array(ServiceAccountTrustSchema),
      leaks: z.array(SecretLeakSchema).meta({
        description:
          'Where its secrets were reported leaked (GitHub secret scanning), latest first',
      }),
    })
    .meta({ id: 'ServiceAccountCredentials' }),
);

export const ServiceAccountWithSecretSchema = responseSchema<
  Omit<ServiceAccountWithSecret, 'revision'>
>()(ServiceAccountSchema.extend({ secret: z.string() }).meta({ id: 'ServiceAccountWithSecret' }));
