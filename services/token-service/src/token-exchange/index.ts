/**
 * The token-exchange wing. Owns: calls on behalf of others (OAuth 2.0 Token Exchange, RFC 8693;
 * decision 0037): who may act for others at which audience (the permissions, their repository,
 * use cases and internal routes) and the exchange's decision (exchange-policy.ts). The grant
 * itself, inside oidc-provider's token endpoint, is the oidc wing's (oidc/token-exchange-grant.ts).
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: platform, realms, service-accounts
 */
export { createDelegationRepository } from './delegation-repository.js';
export { sameAudience } from './delegations.js';
export type { DelegationRepository } from './delegation-repository.js';
export { delegationRoutes } from './internal-delegation-routes.js';
export {
  ACCESS_TOKEN_TYPE,
  JWT_TOKEN_TYPE,
  TOKEN_EXCHANGE_GRANT,
  TOKEN_EXCHANGE_PARAMETERS,
  planExchange,
} from './exchange-policy.js';
export type {
  ExchangeContext,
  ExchangeParams,
  ExchangePlan,
  ExchangingActor,
} from './exchange-policy.js';
