import type { Logger } from '@plant/shared/logging';
import { createRedisClient, type RedisTarget, redisTargetOf } from '@plant/shared/redis';
import type { Redis } from 'ioredis';
import type { TokenServiceConfig } from '../config.js';

/** The token service's three connections to Redis, all to one target. */
export interface RedisConnections {
  target: RedisTarget;
  /** Commands: counters, budgets, replay claims, publishing. */
  redis: Redis;
  /** Grant quotas' increments, without auto-pipelining. */
  quotaRedis: Redis;
  /** The change channels' subscription (platform/change-subscriptions.ts). */
  subscriber: Redis;
}

/**
 * The connections, their errors logged as warnings. Reconnect attempts at most half a second
 * apart (ioredis' default backs off to 2 s): after a failover the publisher's kept events go
 * out, and the subscription is back, that much sooner.
 */
export function createRedisConnections(
  config: TokenServiceConfig,
  logger: Logger,
): RedisConnections {
  const retryStrategy = (attempt: number) => Math.min(50 * attempt, 500);
  const redisOptions = {
    maxRetriesPerRequest: 2,
    enableAutoPipelining: true,
    lazyConnect: false,
    retryStrategy,
  };
  const target = redisTargetOf(config);
  const redis = createRedisClient(target, redisOptions);
  // Grant quotas count on every grant of a limited account, on a connection of their own
  // without auto-pipelining: their increments are already batched per account
  // (`createGrantQuotaCounter`), and on the shared client the quota's grant measured slower
  // (docs/performance.md, "quota").
  const quotaRedis = createRedisClient(target, {
    ...redisOptions,
    enableAutoPipelining: false,
  });
  // autoResubscribe off: ioredis' own resubscription after a reconnect drops its promise, so a
  // SUBSCRIBE refused or cut short (the client closed before Redis confirmed it) was an
  // unhandled rejection, which ends a Node process (a test's teardown right after a Redis
  // restart failed with "Connection is closed."). The 'ready' listeners of
  // platform/change-subscriptions.ts subscribe every channel themselves and handle the outcome.
  const subscriber = createRedisClient(target, {
    maxRetriesPerRequest: null,
    retryStrategy,
    autoResubscribe: false,
  });
  for (const client of [redis, quotaRedis, subscriber])
    client.on('error', (err: Error) =>
      logger.warn({ err: { message: err.message } }, 'redis error'),
    );
  return { target, redis, quotaRedis, subscriber };
}
