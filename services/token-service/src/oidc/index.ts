/**
 * The oidc wing. Owns: the oidc-provider boundary (decision 0013): each realm's provider and its
 * configuration, the Postgres adapter and payload scrubbing, replay detection, the authorization-
 * request guard, the provider's pages, the public realm mount and token route that hand a
 * request to its realm's provider (`realm-routes.ts`), what a service account's client carries
 * and the scopes it follows (principal-metadata.ts), the access tokens' claims
 * (token-claims.ts), the token-exchange grant
 * (token-exchange-grant.ts), and oidc-provider-internals.ts, the one module that relies on its
 * internals.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: client-auth, platform, realms, signing-keys, token-exchange
 */
export { TOO_MANY_STARTS, isAuthorizationPath } from './authorization-request-guard.js';
export {
  DEVICE_CODE_TTL_SECONDS,
  TOO_MANY_CODE_ENTRIES,
  TOO_MANY_DEVICE_CODES,
} from './device-flow.js';
export type { DeviceFlowBudgets } from './device-flow.js';
export { startExpiredPayloadSweep } from './expired-payload-sweep.js';
export { createOidcPayloadRepository } from './oidc-payload-repository.js';
export type { OidcPayloadRepository } from './oidc-payload-repository.js';
export {
  buildClient,
  replaceClientLookup,
  replaceClientSecretComparison,
  serveIssuerPerRequest,
} from './oidc-provider-internals.js';
export type { Client, ProviderContext } from './oidc-provider-internals.js';
export {
  OWN_SCRIPTS,
  SIGN_IN_ASSETS,
  errorPage,
  messageCard,
  page,
  pageHeaders,
  signInAgainLink,
  unknownRealmPage,
} from './provider-pages.js';
export { INTERACTION_TTL_SECONDS, realmConfiguration } from './realm-configuration.js';
export type { SignInRules } from './realm-configuration.js';
export {
  PRINCIPAL_METADATA,
  SIGNAL_SCOPES,
  serviceAccountScope,
  type PrincipalMetadata,
} from './principal-metadata.js';
export { exchangeGrant, wireProvider } from './realm-provider.js';
export type {
  GrantOutcomes,
  RealmBinding,
  RealmProviderDeps,
  ServeClients,
} from './realm-provider.js';
export { RealmProviders } from './realm-providers.js';
export type { GrantEngine, RealmRequestBinding } from './realm-providers.js';
export { realmMount, tokenRoute } from './realm-routes.js';
