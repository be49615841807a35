/** Helpers shared by the end-to-end tests (the platform and its clients, hostile-input checks). */
export * from './http-client.js';
export * from './platform.js';
export * from './sign-in-client.js';
export * from './response-checks.js';
export * from './hostile-arbitraries.js';
export * from './hostile-runner.js';
export * from './token-forge.js';
export * from './load.js';
export * from './route-fuzzer.js';
export * from './route-dictionary.js';
