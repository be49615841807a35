/**
 * The `credential-policy` wing's public module: other wings import it from here only.
 *
 * The tenant's credential policy for service accounts (secret maximum age, leak response,
 * default grant quota): use cases, validators (`GrantQuotaBody` included), API routes and
 * operations, the Credentials settings page and the policy cards the account page shows.
 *
 * May call: platform, audit, portal, sessions.
 */
// What other wings use:
export { credentialSettingsPageHandler } from './credential-policy-page-routes.js';
export { leaksCard, quotaCard, secretExpiryNote } from './credential-policy-page.js';
export {
  credentialPolicyRoutes,
  registerCredentialPolicyOperations,
} from './credential-policy-routes.js';
export { GrantQuotaBody } from './credential-policy-validators.js';
export { getCredentialPolicy } from './credential-policy.js';
