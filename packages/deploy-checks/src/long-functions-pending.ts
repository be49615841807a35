/**
 * Functions of product code over the length bound (test/function-length.test.ts) that are not
 * split yet and carry no `// long: <reason>`: each is being split, or given its reason, on its
 * own branch. The check fails for an entry that is no longer long, has its reason now or is
 * gone, so the list only shrinks; it is meant to be empty. Never add to it: split the function,
 * or write why it is long on the line above it.
 *
 * An entry is `<repo-relative file>#<function name>` (a function expression without a name of
 * its own: `(anonymous)`); one entry per function, so a name found twice is listed twice.
 */
export const LONG_FUNCTIONS_PENDING: readonly string[] = [
  'packages/resource-auth/src/bearer/bearer-auth.ts#createBearerAuth',
  'packages/resource-auth/src/platform/http-call.ts#httpCall',
  'packages/resource-auth/src/platform/http-call.ts#(anonymous)',
  'packages/resource-auth/src/revocation/revocation-metrics.ts#createRevocationMetrics',
  'services/account-admin/src/account-admin.ts#createAccountAdmin',
  'services/account-admin/src/data-access/session-store.ts#createSessionStore',
  'services/account-admin/src/entry-points/api/credential-operations.ts#registerCredentialOperations',
  'services/account-admin/src/entry-points/api/credential-routes.ts#credentialRoutes',
  'services/account-admin/src/entry-points/api/openapi.ts#accountAdminOperations',
  'services/account-admin/src/entry-points/api/people-operations.ts#registerPeopleOperations',
  'services/account-admin/src/entry-points/api/people-routes.ts#peopleRoutes',
  'services/account-admin/src/entry-points/api/routes.ts#apiRoutes',
  'services/account-admin/src/entry-points/web/portal-routes.ts#portalRoutes',
  'services/account-admin/src/entry-points/web/sign-in-routes.ts#signInRoutes',
  'services/account-admin/src/entry-points/web/sign-in-routes.ts#finishSignIn',
  'services/token-service/src/migrations/0001-auth-schema.ts#up',
  'services/token-service/src/migrations/0008-people-and-second-factors.ts#up',
  'services/token-service/src/people/internal-people-routes.ts#peopleRoutes',
  'services/token-service/src/people/invitation-repository.ts#createInvitationRepository',
];
