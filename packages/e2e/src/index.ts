/** Helpers shared by the end-to-end tests (platform start-up, clients, hostile-input checks). */
export * from './infrastructure.js';
export * from './http-client.js';
export * from './platform.js';
export * from './response-checks.js';
export * from './hostile-arbitraries.js';
export * from './token-forge.js';
export * from './load.js';
