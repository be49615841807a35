/**
 * The client-auth wing. Owns: how a client proves who it is at the token endpoint: client secrets
 * against their digests, private_key_jwt assertions (JWS checks, jti replay in Redis, federated
 * issuers' keys and the policy for fetching them), and the throttle of failed attempts.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: credentials, platform, quotas
 */
export { createAssertionReplayStore } from './assertion-replay-repository.js';
export { ClientAuthentication } from './authenticate-client.js';
export type { ClientAuthSource, ClientCredential } from './authenticate-client.js';
export { ClientAssertionVerifier } from './client-assertions.js';
export {
  CLIENT_AUTH_FAILURE_CHANNEL,
  createClientAuthFailureRepository,
} from './client-auth-failure-repository.js';
export type { ClientAuthFailureRepository } from './client-auth-failure-repository.js';
export { createFederatedIssuerKeys } from './federated-issuer-keys.js';
export { checkedLookup, urlProblem } from './issuer-fetch.js';
export type { IssuerFetchPolicy } from './issuer-fetch.js';
export { ASYMMETRIC_ALGS, algFits } from './jws.js';
