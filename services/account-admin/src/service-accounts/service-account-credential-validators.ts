/**
 * Edge validation of a service account's credentials in the account admin API: the bodies of
 * adding a key or a trusted workload, and the ids in their paths. What a key or an issuer
 * must be beyond its shape is the token service's to check (it answers 400 with the reason).
 */
import {
  MAX_KEYS_PER_SERVICE_ACCOUNT,
  PUBLIC_KEY_PEM_MAX,
  TRUST_FIELD_MAX,
} from '@plant/shared/token-service-client';
import { z } from 'zod';
import { unknownFieldMessage } from '../platform/index.js';
import { requiredText, ServiceAccountPath } from './service-account-validators.js';

const KEY_ID = /^[A-Za-z0-9._~-]{1,128}$/;
const TRUST_ID = /^trust-[0-9a-f]{16}$/;
const SECRET_ID = /^sec-[0-9a-f]{16}$/;

export const isKeyId = (value: string) => KEY_ID.test(value);
export const isTrustId = (value: string) => TRUST_ID.test(value);
export const isSecretId = (value: string) => SECRET_ID.test(value);

export const ServiceAccountSecretPath = ServiceAccountPath.extend({
  secret_id: z.string().regex(SECRET_ID),
});

/** The longest a secret may be given to live (the tenant policy's longest maximum age). */
export const SECRET_LIFETIME_MAX_DAYS = 730;

export const AddSecretBody = z
  .strictObject(
    {
      expires_at: z.iso
        .datetime({ offset: true, error: 'expires_at must be an ISO 8601 date-time' })
        .optional()
        .meta({
          description: `When the new secret stops working: in the future, at most ${SECRET_LIFETIME_MAX_DAYS} days ahead; absent: only the tenant's maximum secret age ends it`,
        }),
    },
    { error: unknownFieldMessage('{expires_at}') },
  )
  .meta({
    id: 'NewServiceAccountSecret',
    description: 'At most two live secrets per service account',
  });
export type AddSecretInput = z.output<typeof AddSecretBody>;

export const ServiceAccountKeyPath = ServiceAccountPath.extend({
  key_id: z.string().regex(KEY_ID),
});
export const ServiceAccountTrustPath = ServiceAccountPath.extend({
  trust_id: z.string().regex(TRUST_ID),
});

export const AddKeyBody = z
  .strictObject(
    {
      jwk: z
        .record(z.string(), z.unknown(), { error: 'jwk must be a JSON object (a public JWK)' })
        .optional()
        .meta({
          description:
            'A public JWK: RSA (2048 to 4096 bits, odd e up to 2^32 - 1, normally 65537), EC P-256 or Ed25519; its kid, if any, is the key id',
        }),
      pem: z
        .string({ error: 'pem must be a string' })
        .max(PUBLIC_KEY_PEM_MAX, { error: `pem must be at most ${PUBLIC_KEY_PEM_MAX} characters` })
        .optional()
        .meta({ description: 'A "BEGIN PUBLIC KEY" PEM; its RFC 7638 thumbprint is the key id' }),
    },
    { error: unknownFieldMessage('{jwk} or {pem}') },
  )
  .refine((body) => (body.jwk === undefined) !== (body.pem === undefined), {
    error: 'give exactly one of jwk and pem',
  })
  .meta({
    id: 'NewServiceAccountKey',
    minProperties: 1,
    maxProperties: 1,
    description: `At most ${MAX_KEYS_PER_SERVICE_ACCOUNT} keys per service account`,
  });
export type AddKeyInput = z.output<typeof AddKeyBody>;

export const AddTrustBody = z
  .strictObject(
    {
      issuer: requiredText('issuer', TRUST_FIELD_MAX).meta({
        description:
          "The workload platform's OIDC issuer (https), e.g. https://token.actions.githubusercontent.com",
      }),
      subject: requiredText('subject', TRUST_FIELD_MAX).meta({
        description:
          'The `sub` its tokens carry, e.g. system:serviceaccount:<namespace>:<name> or repo:<org>/<repo>:ref:refs/heads/main',
      }),
      audience: requiredText('audience', TRUST_FIELD_MAX).meta({
        description: 'The `aud` its tokens carry for us, usually the realm issuer',
      }),
    },
    { error: unknownFieldMessage('{issuer, subject, audience}') },
  )
  .meta({ id: 'NewServiceAccountTrust' });
export type AddTrustInput = z.output<typeof AddTrustBody>;
