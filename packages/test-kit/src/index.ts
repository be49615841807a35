export * from './env.js';
export * from './redis-server.js';
export * from './service-process.js';
export * from './test-issuer.js';
export * from './waiting.js';
