/** Small helpers of no one concern: a timeout around a promise, a memory-bounded LRU cache. */
export * from '../sized-lru.js';
export * from '../with-timeout.js';
