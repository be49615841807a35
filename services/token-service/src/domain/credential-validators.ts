import { boundedText, PUBLIC_KEY_PEM_MAX, TRUST_FIELD_MAX } from '@plant/shared';
import { z } from 'zod';
import { ActorBodySchema } from './principal-validators.js';

/** `{jwk}` or `{pem}`, exactly one; what the key itself must be is `importPublicKey`'s to say. */
export const AddKeySchema = ActorBodySchema.extend({
  jwk: z.record(z.string(), z.unknown(), { error: 'jwk must be a JSON object (a public JWK)' }).optional(),
  pem: z.string({ error: 'pem must be a string' }).max(PUBLIC_KEY_PEM_MAX, { error: `pem must be at most ${PUBLIC_KEY_PEM_MAX} characters` }).optional(),
}).refine((body) => (body.jwk === undefined) !== (body.pem === undefined), { error: 'give exactly one of jwk and pem' });

export const AddTrustSchema = ActorBodySchema.extend({
  issuer: z.string({ error: 'issuer must be a string' }).min(1, { error: 'issuer is required' }).max(TRUST_FIELD_MAX, { error: `issuer must be at most ${TRUST_FIELD_MAX} characters` }),
  subject: boundedText('subject', TRUST_FIELD_MAX),
  audience: boundedText('audience', TRUST_FIELD_MAX),
});
