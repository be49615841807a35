/**
 * Every Redis connection of a resource server and of every service (commands, pub/sub
 * subscribers, the operator CLI) is made by `createRedisClient`: a plain URL, or a master that
 * Redis Sentinel manages. With Sentinel the client asks the sentinels where the master is,
 * checks that the server it reached says it is that master, and on a failover (the master's
 * connection closes, or a demoted master refuses a write with READONLY) asks again: callers see
 * a reconnect, exactly as when a single Redis restarts. The services read the target from
 * their configuration (`redisConfig` of @plant/shared/redis).
 */
import { Redis, type RedisOptions } from 'ioredis';

/** One sentinel's address. */
export interface SentinelAddress {
  host: string;
  port: number;
}

/** Where a service's Redis is: `redisTargetOf(config)`. */
export interface RedisTarget {
  /** REDIS_URL. With sentinels only its user, password, database number and scheme (`rediss:` = TLS) are used. */
  url: string;
  /** Empty: `url` names the server itself. */
  sentinels: readonly SentinelAddress[];
  /** The master group the sentinels watch (`sentinel monitor <name> ...`). */
  sentinelName: string;
  /** The sentinels' own password (their `requirepass`), if they have one. */
  sentinelPassword?: string | undefined;
}

/** The configuration keys `redisTargetOf` reads (`redisConfig` declares them). */
export interface RedisConfig {
  REDIS_URL: string;
  REDIS_SENTINELS: readonly SentinelAddress[];
  REDIS_SENTINEL_NAME: string;
  REDIS_SENTINEL_PASSWORD?: string | undefined;
}

export function redisTargetOf(config: RedisConfig): RedisTarget {
  return {
    url: config.REDIS_URL,
    sentinels: config.REDIS_SENTINELS,
    sentinelName: config.REDIS_SENTINEL_NAME,
    sentinelPassword: config.REDIS_SENTINEL_PASSWORD,
  };
}

/** The connection options of a target, before the caller's own (retries, queueing, names). */
export function redisConnectionOptions(target: RedisTarget): RedisOptions {
  const url = new URL(target.url);
  const db = Number(url.pathname.slice(1) || '0');
  const credentials = {
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(Number.isInteger(db) && db > 0 ? { db } : {}),
  };
  return {
    ...credentials,
    sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
    name: target.sentinelName,
    ...(target.sentinelPassword === undefined ? {} : { sentinelPassword: target.sentinelPassword }),
    // TLS to the master and replicas, as rediss: asks; the sentinels are asked in plain TCP.
    ...(url.protocol === 'rediss:' ? { tls: {}, enableTLSForSentinelMode: true } : {}),
    // A master demoted while its clients stay connected refuses writes with READONLY: reconnect
    // (to whatever the sentinels name now) and send the command again. ioredis' failoverDetector
    // is not used: a +switch-master that arrives while a reconnect is asking the sentinels ends
    // the client for good ("Connection is closed." to every later command; seen in the
    // Sentinel topology test), and a dead master's connections close by themselves.
    reconnectOnError: (err: Error) => (err.message.startsWith('READONLY') ? 2 : false),
    // Every sentinel may be asked once a round; a round that finds no master is retried soon (a failover is seconds).
    sentinelRetryStrategy: (attempt: number) => Math.min(100 * attempt, 1000),
  };
}

/**
 * How long a disconnecting client waits for its socket to close before destroying it. ioredis
 * arms a timer of this length on every disconnect and clears it only on the socket's `close`,
 * which a socket refused before it opened has already emitted: with ioredis' 2 s, a process
 * that closed a client of an unreachable Redis (a stop during an outage, a test of one) stayed
 * alive 2 s for nothing. A healthy client leaves with QUIT, and its socket closes well within this.
 */
const DISCONNECT_TIMEOUT_MS = 250;

/**
 * A Redis client of `target` (or of a plain URL) with the caller's options over the
 * connection's: each use chooses its own retries, queueing and connection name.
 */
export function createRedisClient(target: RedisTarget | string, options: RedisOptions = {}): Redis {
  const chosen = { disconnectTimeout: DISCONNECT_TIMEOUT_MS, ...options };
  if (typeof target === 'string') return new Redis(target, chosen);
  if (target.sentinels.length === 0) return new Redis(target.url, chosen);
  return new Redis({ ...redisConnectionOptions(target), ...chosen });
}
