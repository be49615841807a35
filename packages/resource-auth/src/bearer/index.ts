export * from './authenticated-request.js';
export * from './bearer-auth.js';
export * from './bearer-errors.js';
export { JwksCache, type JwksCacheOptions, type KeyLookup } from './jwks-cache.js';
export * from './principal.js';
