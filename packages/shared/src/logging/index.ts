/** Logging: the pino logger and the request context that carries the request id. */
export * from './logger.js';
export * from './request-context.js';
