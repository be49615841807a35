export * from './env.js';
export * from './service-process.js';
export * from './test-issuer.js';
