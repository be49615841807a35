export * from './revocation/types.js';
export * from './bearer/index.js';
export * from './dpop/index.js';
export * from './revocation/index.js';
export * from './resource-auth.js';
