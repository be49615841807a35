/** Redis: every connection (plain URL or Sentinel) made from one configuration. */
export * from './redis-connection.js';
