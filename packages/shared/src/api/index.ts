/** Wire shapes: API schemas, the Error shape and typed errors, name and mailbox rules, page limits and cursors. */
export * from './api-types.js';
export * from '@plant/resource-auth/platform/errors';
export * from './mailbox-address.js';
export * from './name-text.js';
export * from './page-limit.js';
export * from './position-cursor.js';
export * from './storable-text.js';
export * from '@plant/resource-auth/platform/realm-names';
