/**
 * The shape the credential-policy routes answer with.
 * For the OpenAPI document: tied at compile time to the type the code answers with
 * (`responseSchema<T>()`), and the component tests validate the real answers against it.
 */
import { responseSchema } from '@plant/shared/http';
import type { CredentialPolicy } from '@plant/shared/token-service-client';
import { z } from 'zod';
import { GrantQuotaBody } from './credential-policy-validators.js';

/** The public body: the revision is the `ETag` header (platform/etag.ts), not a field. */
export const CredentialPolicySchema = responseSchema<Omit<CredentialPolicy, 'revision'>>()(
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
