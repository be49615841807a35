export * from './revocation/types.js';
