/**
 * The account admin API's OpenAPI 3.1 document, served at `/api/v1/openapi.json`. Generated
 * from the schemas the routes validate with and the response shapes, which each wing registers
 * beside its routes (`register…Operations`); test/openapi-contract.test.ts gives the routes' parsers and
 * the generated document the same inputs at and around every bound.
 */
import {
  BEARER_JWT,
  documentConditionalRequests,
  errorResponses,
  generateApiDocument,
  jsonResponse,
  OpenAPIRegistry,
  type OpenApiDocument,
} from '@plant/shared/http';
import { MAX_SERVICE_ACCOUNTS } from '@plant/shared/token-service-client';
import { registerAuditOperations } from '../audit/index.js';
import { registerCredentialPolicyOperations } from '../credential-policy/index.js';
import { registerPeopleOperations } from '../people/index.js';
import { registerFactorOperations } from '../second-factors/index.js';
import {
  registerCredentialOperations,
  registerDelegationOperations,
  registerServiceAccountOperations,
} from '../service-accounts/index.js';
import { registerSessionOperations } from '../sessions/index.js';
import { MeSchema } from './me-schema.js';

const common = {
  401: 'No credentials, or an invalid, expired or revoked token (WWW-Authenticate: Bearer)',
  503: 'The token service or the audit trail is unavailable; nothing was changed',
};
const management = {
  ...common,
  403: 'Not a user with Account Admin (service-account tokens always), or a missing/mismatched X-CSRF-Token on a session request',
};
/** Actions that mint or remove credentials: a person with a second factor must have used it recently. */
const sensitive = {
  ...management,
  401: `${common[401]}; or, with \`error="insufficient_user_authentication"\` and \`acr_values\`/\`max_age\` (RFC 9470), the person must verify their second factor again (step-up: GET /step-up in the portal)`,
};
/** The documented operations, each registered with the schema objects its route validates with. */
export function accountAdminOperations(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerPath({
    method: 'get',
    path: '/me',
    summary: 'Who am I',
    operationId: 'getMe',
    responses: { 200: jsonResponse('The caller', MeSchema), ...errorResponses(common) },
  });
  registerServiceAccountOperations(registry, { common, management: sensitive });
  registerCredentialOperations(registry, { common, management: sensitive });
  registerDelegationOperations(registry, { common, management: sensitive });
  registerCredentialPolicyOperations(registry, { common, management: sensitive });
  registerPeopleOperations(registry, { common });
  registerSessionOperations(registry, { common, management: sensitive });
  registerFactorOperations(registry, { common, management: sensitive });
  registerAuditOperations(registry, { common });
  // ETag / If-Match on one service account and everything under it (http/api-routes.ts).
  documentConditionalRequests(registry, {
    changes: (_method, path) => path.startsWith('/service-accounts/{client_id}'),
    answersEtag: (method, path) =>
      path === '/service-accounts/{client_id}' ||
      (method === 'post' && /\/(reset-secret|disable|enable)$/.test(path)),
    preconditionFailed:
      'If-Match names another state than the account is at (it changed since): read it again, then retry; nothing was changed',
  });
  // …and on one person's role and status.
  documentConditionalRequests(registry, {
    changes: (method, path) =>
      path === '/users/{id}' && (method === 'patch' || method === 'delete'),
    answersEtag: (_method, path) => path === '/users/{id}',
    preconditionFailed:
      "If-Match names another state than the person's role and status are at (they changed since): read them again, then retry; nothing was changed",
  });
  // …on the tenant's credential policy…
  documentConditionalRequests(registry, {
    changes: (method, path) => path === '/settings/credentials' && method === 'patch',
    answersEtag: (_method, path) => path === '/settings/credentials',
    preconditionFailed:
      'If-Match names another state than the credential policy is at (someone changed it since): read it again, then retry; nothing was changed',
  });
  // …on the tenant's people policy…
  documentConditionalRequests(registry, {
    changes: (method, path) => path === '/settings/people' && method === 'patch',
    answersEtag: (_method, path) => path === '/settings/people',
    preconditionFailed:
      'If-Match names another state than the people policy is at (someone changed it since): read it again, then retry; nothing was changed',
  });
  // …on the removal of one's own factor or the end of one's own session: neither is ever
  // changed, so each is at `"v1"` while it exists; one already removed or ended is 412.
  documentConditionalRequests(registry, {
    changes: (method, path) =>
      method === 'delete' && (path === '/me/factors/{factor_id}' || path === '/me/sessions/{id}'),
    answersEtag: () => false,
    preconditionFailed:
      'The factor or session is gone (removed or ended since), or If-Match names another state than its own (`"v1"`): nothing was changed',
  });
  // …and on an invitation's revocation: an invitation is never changed, so the ETag its
  // creation answers (`"v1"`) holds while it is pending; one revoked, accepted or expired is 412.
  documentConditionalRequests(registry, {
    changes: (method, path) => path === '/invitations/{id}' && method === 'delete',
    answersEtag: (method, path) => path === '/users' && method === 'post',
    preconditionFailed:
      'The invitation is no longer pending (revoked, accepted or expired since), or If-Match names another state than its own: nothing was changed',
  });
  return registry;
}

/** The OpenAPI 3.1 document served at /api/v1/openapi.json. */
export function openApiDocument(portalUrl: string): OpenApiDocument {
  return generateApiDocument(accountAdminOperations(), {
    title: 'Plant Store account admin API',
    version: '1.0.0',
    description:
      "Manage the service accounts and people of your Plant Store tenant. Authenticate with `Authorization: Bearer <access token>` from your tenant's realm " +
      '(audience `ACCOUNT_ADMIN_AUDIENCE`) or with the portal session, whose state-changing requests must send the csrf_token cookie value in X-CSRF-Token. ' +
      `Creating, resetting, deleting and changing service accounts needs a human user with the Account Admin role. At most ${MAX_SERVICE_ACCOUNTS} service accounts per tenant. ` +
      'People (`/users`, `/invitations`) are managed by Account Admins only; every change needs a second factor verified in the last 10 minutes where the person has one or the tenant requires one.',
    serverUrl: `${portalUrl.replace(/\/+$/, '')}/api/v1`,
    securitySchemes: {
      bearer: BEARER_JWT,
      session: { type: 'apiKey', in: 'cookie', name: 'aa_session' },
    },
  });
}
