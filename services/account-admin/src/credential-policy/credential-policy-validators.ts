/** Edge validation of the credential policy and of a service account's quota (the token service checks the same bounds). */
import {
  credentialPolicyFields,
  GrantQuotaSchema,
  hasPolicyChange,
  POLICY_CHANGE_REQUIRED,
} from '@plant/shared/token-service-client';
import { z } from 'zod';
import { unknownFieldMessage } from '../platform/index.js';

/** A grant quota: the policy's default, and a service account's own (service-account-validators.ts). */
export const GrantQuotaBody = GrantQuotaSchema.meta({
  id: 'GrantQuota',
  description:
    'Client-credentials grants per minute, counted across every token-service replica: off (not counted), log (a metric and an audit event when over, nothing refused) or enforce (429 with Retry-After when over)',
});

export const UpdateCredentialPolicyBody = z
  .strictObject(
    {
      secret_max_age_days: credentialPolicyFields.secret_max_age_days.meta({
        description:
          "Secrets older than this many days (1..730) stop working, counted from each secret's creation; null: no maximum",
      }),
      leak_response: credentialPolicyFields.leak_response.meta({
        description:
          'What a leak report does to a live secret: revoke it at once (default), or notify only',
      }),
      default_quota: GrantQuotaBody.optional(),
    },
    { error: unknownFieldMessage('{secret_max_age_days?, leak_response?, default_quota?}') },
  )
  .refine(hasPolicyChange, { error: POLICY_CHANGE_REQUIRED })
  .meta({ id: 'CredentialPolicyChange', minProperties: 1 });
export type UpdateCredentialPolicyInput = z.output<typeof UpdateCredentialPolicyBody>;
