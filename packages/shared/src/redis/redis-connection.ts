/**
 * Every Redis connection of every service (commands, pub/sub subscribers, the operator CLI)
 * is made by `createRedisClient`, from one configuration: a plain `REDIS_URL`, or a master
 * that Redis Sentinel manages (`REDIS_SENTINELS`). With Sentinel the client asks the
 * sentinels where the master of `REDIS_SENTINEL_NAME` is, checks that the server it reached
 * says it is that master, and on a failover (the master's connection closes, or a demoted
 * master refuses a write with READONLY) asks again: callers see a reconnect, exactly as when a
 * single Redis restarts.
 */
import { z } from 'zod';
import type { SentinelAddress } from '@plant/resource-auth/platform/redis-client';
import { credentialUrlKey, passwordKey } from '../config/index.js';

export * from '@plant/resource-auth/platform/redis-client';

const SENTINEL_ADDRESS = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/;

/** `host:port,host:port` (IPv6 as `[::1]:26379`); empty is none. Throws naming the entry it cannot read. */
export function parseSentinels(raw: string): SentinelAddress[] {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = SENTINEL_ADDRESS.exec(entry);
      const port = Number(match?.[3]);
      if (match === null || port < 1 || port > 65535)
        throw new Error(`"${entry}" is not host:port`);
      return { host: match[1] ?? match[2]!, port };
    });
}

/** The Redis keys of every service: REDIS_URL, and the Sentinel keys beside it. */
export function redisConfig({ redisUse }: { redisUse: string }) {
  return {
    REDIS_URL: credentialUrlKey(z.url().default('redis://127.0.0.1:6379')).describe(
      `Redis URL (${redisUse}); with REDIS_SENTINELS its host and port are not used, its user, password, database and scheme (rediss: = TLS) are`,
    ),
    REDIS_SENTINELS: z
      .string()
      .default('')
      .transform((value, ctx) => {
        try {
          return parseSentinels(value);
        } catch (err) {
          ctx.addIssue({
            code: 'custom',
            message: `must be comma-separated host:port addresses: ${(err as Error).message}`,
          });
          return z.NEVER;
        }
      })
      .describe(
        'Redis Sentinel addresses, host:port comma-separated (empty: REDIS_URL is the server itself)',
      ),
    REDIS_SENTINEL_NAME: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, {
        error: 'must be a Sentinel master name (letters, digits, . _ -)',
      })
      .default('mymaster')
      .describe('The master group name the sentinels monitor'),
    REDIS_SENTINEL_PASSWORD: passwordKey(z.string().min(1).optional()).describe(
      "The sentinels' own password (their requirepass), if any (secret)",
    ),
  };
}
