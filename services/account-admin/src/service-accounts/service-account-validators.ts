/**
 * Edge validation of the account admin API's inputs. The zod schemas are what the routes parse
 * with and what the OpenAPI document is generated from (`.meta` names their components); the
 * audit paging and path parsers are hand-written, and their schemas here state what they accept.
 */
import { boundedText, NAME_RULE, nameText, PLANT_TAG_MAX } from '@plant/shared/api';
import {
  grantsSchema,
  SERVICE_ACCOUNT_NAME_MAX,
  ServiceAccountRoleSchema,
} from '@plant/shared/token-service-client';
import { z } from 'zod';
import { GrantQuotaBody } from '../credential-policy/index.js';
import { unknownFieldMessage } from '../platform/index.js';

const CLIENT_ID_MAX = 128;
const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** A path id that cannot be a client_id cannot name an existing account: 404, never 400. */
export function isClientId(value: string): boolean {
  return CLIENT_ID.test(value);
}

/** The `{client_id}` of the service-account paths as documented; `isClientId` is its check. */
export const ServiceAccountPath = z.object({
  client_id: z.string().max(CLIENT_ID_MAX).regex(CLIENT_ID),
});

/** A required text field whose absence reads "<field> is required". */
export function requiredText(field: string, max: number) {
  return required(field, boundedText(field, max));
}

/** A required name or tag (`nameText`: the shared rule of names a person reads, as the token service checks it). */
export function requiredName(field: string, max: number) {
  return required(field, nameText(field, max));
}

function required(field: string, text: ReturnType<typeof boundedText>) {
  // The document describes a pipe by its input side: carry the text's bounds over to it.
  return z
    .string({
      error: (issue) =>
        issue.input === undefined ? `${field} is required` : `${field} must be a string`,
    })
    .pipe(text)
    .meta(text.meta() ?? {});
}

export const CreateServiceAccountBody = z
  .strictObject(
    {
      name: requiredName('name', SERVICE_ACCOUNT_NAME_MAX).meta({
        description: `Unique in the tenant, compared case-insensitively and by look-alike characters (Unicode TR39 skeleton of the NFKC form). ${NAME_RULE}`,
      }),
    },
    { error: unknownFieldMessage('{name}') },
  )
  .meta({ id: 'NewServiceAccount' });
export type CreateServiceAccountInput = z.output<typeof CreateServiceAccountBody>;

export const GrantBody = z
  .strictObject(
    {
      tag: requiredName('tag', PLANT_TAG_MAX),
      permission: z.literal('edit', { error: 'permission must be "edit"' }),
    },
    { error: 'each grant must be an object {tag, permission: "edit"}' },
  )
  .meta({ id: 'Grant' });

export const UpdateServiceAccountBody = z
  .strictObject(
    {
      role: ServiceAccountRoleSchema.optional(),
      // Grants are strict {tag, permission: "edit"}: equal items are exactly repeated tags.
      grants: grantsSchema(GrantBody)
        .meta({ uniqueItems: true, description: 'Replaces the grants; tags unique' })
        .optional(),
      dpop_bound_access_tokens: z
        .boolean({ error: 'dpop_bound_access_tokens must be true or false' })
        .meta({
          description:
            'Require sender-constrained tokens (DPoP, RFC 9449): the account then gets tokens only with a DPoP proof, bound to its key',
        })
        .optional(),
      receive_signals: z
        .boolean({ error: 'receive_signals must be true or false' })
        .meta({
          description:
            'Allow the account to receive Shared Signals (SSF/CAEP/RISC): its grants may ask for ssf.manage and ssf.read',
        })
        .optional(),
      quota: GrantQuotaBody.nullable()
        .meta({
          description:
            "This account's own grant quota; null: the tenant's default (Settings, credentials). Revokes nothing",
        })
        .optional(),
    },
    {
      error: unknownFieldMessage(
        '{role?, grants?, dpop_bound_access_tokens?, receive_signals?, quota?}',
      ),
    },
  )
  .refine(
    (body) =>
      body.role !== undefined ||
      body.grants !== undefined ||
      body.dpop_bound_access_tokens !== undefined ||
      body.receive_signals !== undefined ||
      body.quota !== undefined,
    {
      error: 'role, grants, dpop_bound_access_tokens, receive_signals or quota is required',
    },
  )
  // The refinement in JSON Schema terms: with only these fields allowed, one of them.
  .meta({ id: 'ServiceAccountChange', minProperties: 1 });
export type UpdateServiceAccountInput = z.output<typeof UpdateServiceAccountBody>;
