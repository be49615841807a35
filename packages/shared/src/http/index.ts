/** HTTP: app and routes, bodies, errors, servers, metrics, health, OpenAPI, proxy trust. */
export * from '../error-middleware.js';
export * from '../health.js';
export * from '../http-app.js';
export { httpCall, type HttpCallAnswer, type HttpCallOptions } from '../http-call.js';
export * from '../http-logger.js';
export * from '../http-observability.js';
export * from '../json-body.js';
export * from '../management-app.js';
export * from '../metrics.js';
export * from '../node-route.js';
export * from '../openapi-document.js';
export * from '../proxy-trust.js';
export * from '../route-table.js';
export * from '../web-server.js';
