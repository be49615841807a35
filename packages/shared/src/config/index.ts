/** Configuration: loading the environment, the shared keys, what a production secret must be. */
export * from './config.js';
export * from './production-secrets.js';
export * from './service-config.js';
