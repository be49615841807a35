export * from './revocation/types.js';
export * from './bearer/index.js';
