/** Small helpers of no one concern: a timeout around a promise, a memory-bounded LRU cache. */
export * from '@plant/resource-auth/platform/sized-lru';
export * from '@plant/resource-auth/platform/with-timeout';
