// ---- public surface (generated from what other wings import) ----
export { credentialSettingsPageHandler } from './credential-policy-page-routes.js';
export { leaksCard, quotaCard, secretExpiryNote } from './credential-policy-page.js';
export {
  credentialPolicyRoutes,
  registerCredentialPolicyOperations,
} from './credential-policy-routes.js';
export { GrantQuotaBody } from './credential-policy-validators.js';
export { getCredentialPolicy } from './credential-policy.js';
