/** HTTP: app and routes, bodies, errors, servers, metrics, health, OpenAPI, proxy trust. */
export * from './error-middleware.js';
export * from './health.js';
export * from './http-app.js';
export {
  httpCall,
  type HttpCallAnswer,
  type HttpCallOptions,
} from '@plant/resource-auth/platform/http-call';
export * from './http-logger.js';
export * from './http-observability.js';
export * from './json-body.js';
export * from './management-app.js';
export * from './metrics.js';
export * from '@plant/resource-auth/platform/node-route';
export * from './openapi-document.js';
export * from './precondition.js';
export * from './proxy-trust.js';
export * from './route-table.js';
export * from './web-server.js';
