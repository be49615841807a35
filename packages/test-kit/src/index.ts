export * from './env.js';
export * from './service-process.js';
