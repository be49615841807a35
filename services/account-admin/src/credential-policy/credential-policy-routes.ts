import {
  type ExpressRoute,
  fieldsOf,
  jsonBody,
  type OpenAPIRegistry,
  type Route,
} from '@plant/shared/http';
import {
  errorResponses,
  JSON_BODY_ERRORS,
  jsonRequestBody,
  jsonResponse,
} from '@plant/shared/http';
import { getCredentialPolicy, updateCredentialPolicy } from './credential-policy.js';
import { UpdateCredentialPolicyBody } from './credential-policy-validators.js';
import type { ManagementDeps } from '../audit/index.js';
import { actorOf, conditional, etagged, noStore, requestMeta } from '../platform/index.js';
import { CredentialPolicySchema } from './credential-policy-schemas.js';

/**
 * `/api/v1/settings/credentials`: the tenant's credential policy. Read: every role; change:
 * Account Admin with a recent second factor. The policy answers its revision as its `ETag`, and
 * a change may be conditional on it (`If-Match`, decided under the realm's lock in the token
 * service), so two admins' edits cannot silently overwrite each other.
 */
export function credentialPolicyRoutes(accounts: ManagementDeps, apiBase: string): Route[] {
  const path = `${apiBase}/settings/credentials`;
  return [
    {
      method: 'GET',
      path,
      handlers: [
        async (req, res) => {
          noStore(res).json(etagged(res, await getCredentialPolicy(accounts, actorOf(req))));
        },
      ],
    },
    conditional<ExpressRoute>({
      method: 'PATCH',
      path,
      input: { body: { type: 'json', fields: fieldsOf(UpdateCredentialPolicyBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = UpdateCredentialPolicyBody.parse(req.body);
          const policy = await updateCredentialPolicy(
            accounts,
            actorOf(req),
            requestMeta(req),
            input,
          );
          noStore(res).json(etagged(res, policy));
        },
      ],
    }),
  ];
}

export function registerCredentialPolicyOperations(
  registry: OpenAPIRegistry,
  { common, management }: { common: Record<number, string>; management: Record<number, string> },
): void {
  registry.registerPath({
    method: 'get',
    path: '/settings/credentials',
    summary:
      "The tenant's credential policy: maximum secret age, leak response, default grant quota",
    operationId: 'getCredentialPolicy',
    responses: {
      200: jsonResponse('The policy', CredentialPolicySchema),
      ...errorResponses(common),
    },
  });
  registry.registerPath({
    method: 'patch',
    path: '/settings/credentials',
    summary:
      'Change the credential policy; a maximum secret age applies to existing secrets from their creation time. Needs a second factor verified in the last 10 minutes',
    operationId: 'updateCredentialPolicy',
    request: { body: jsonRequestBody(UpdateCredentialPolicyBody) },
    responses: {
      200: jsonResponse('The policy now', CredentialPolicySchema),
      ...errorResponses({ 400: 'Invalid body', ...JSON_BODY_ERRORS, ...management }),
    },
  });
}
