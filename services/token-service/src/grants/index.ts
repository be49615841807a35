/**
 * The grants wing. Owns: issuing tokens: the one grant engine serving every realm's token endpoint
 * (decision 0005), service accounts as its clients, introspection, resource-server authentication,
 * token metrics.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: client-auth, oidc, platform, realms, signing-keys, token-exchange
 */
export { ResourceServerAuthentication } from './authenticate-resource-server.js';
export { createGrantEngine } from './grant-engine.js';
export type { TokenInspector } from './introspect-token.js';
export { introspectionRoute } from './introspection-route.js';
export type { IntrospectionDeps } from './introspection-route.js';
export { serveServiceAccountClients } from './service-account-clients.js';
export { TokenMetrics } from './token-metrics.js';
