/**
 * The Redis keys every service reads (REDIS_URL and the Sentinel keys beside it) and the
 * connection they make: a bad value stops the service with one line naming the variable, and a
 * Sentinel-managed target hands ioredis the master's credentials from REDIS_URL. The failover
 * itself runs against real sentinels in packages/topology (`pnpm test:topology`).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import { ConfigError, loadConfig } from '../src/config/index.js';
import {
  createRedisClient,
  parseSentinels,
  redisConfig,
  redisConnectionOptions,
  redisTargetOf,
} from '../src/redis/index.js';

const shape = redisConfig({ redisUse: 'tests' });

describe('REDIS_SENTINELS', () => {
  test('When sentinel addresses are given as host:port, names or IPv6 in brackets, then each is read with its port', () => {
    expect(parseSentinels(' sentinel-0.redis:26379, 10.0.0.7:26380 ,[::1]:26381,')).toEqual([
      { host: 'sentinel-0.redis', port: 26379 },
      { host: '10.0.0.7', port: 26380 },
      { host: '::1', port: 26381 },
    ]);
    expect(parseSentinels('')).toEqual([]);
  });

  test.each([
    ['redis-sentinel'],
    ['host:0'],
    ['host:65536'],
    ['host:port'],
    ['redis://host:26379'],
    ['a b:1'],
    ['[zz]:1'],
  ])(
    'When REDIS_SENTINELS holds %p, then loading the configuration stops with one line naming the variable',
    (value) => {
      let refused: unknown;
      try {
        loadConfig(shape, { REDIS_SENTINELS: value });
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as ConfigError).message).toMatch(
        /^configuration error: REDIS_SENTINELS is invalid: must be comma-separated host:port addresses/,
      );
    },
  );

  test('When REDIS_SENTINEL_NAME is not a master name, then the configuration is refused naming it', () => {
    expect(() =>
      loadConfig(shape, { REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'my master\n' }),
    ).toThrow(/REDIS_SENTINEL_NAME is invalid/);
  });

  test('When nothing is set, then REDIS_URL names the server itself and no sentinel is asked', () => {
    const config = loadConfig(shape, {});
    expect(redisTargetOf(config)).toEqual({
      url: 'redis://127.0.0.1:6379',
      sentinels: [],
      sentinelName: 'mymaster',
      sentinelPassword: undefined,
    });
    const client = createRedisClient(redisTargetOf(config), { lazyConnect: true });
    expect([client.options.host, client.options.port, client.options.sentinels]).toEqual([
      '127.0.0.1',
      6379,
      null,
    ]);
    client.disconnect();
  });
});

describe('a Sentinel-managed target', () => {
  test("When sentinels are configured, then the master's user, password and database come from REDIS_URL, the sentinels' password from its own key, and TLS from rediss:", () => {
    const config = loadConfig(shape, {
      REDIS_URL: 'rediss://plant-store:p%40ss@ignored.example:6380/3',
      REDIS_SENTINELS: 's1:26379,s2:26379',
      REDIS_SENTINEL_NAME: 'plantstore',
      REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    });
    const options = redisConnectionOptions(redisTargetOf(config));

    expect(options).toMatchObject({
      username: 'plant-store',
      password: 'p@ss',
      db: 3,
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      name: 'plantstore',
      sentinelPassword: 'sentinel-secret',
      tls: {},
      enableTLSForSentinelMode: true,
    });
    // A demoted master's READONLY sends the client to the new one, the command with it; other errors are the caller's.
    expect([
      options.reconnectOnError?.(
        new Error("READONLY You can't write against a read only replica."),
      ),
      options.reconnectOnError?.(new Error('WRONGTYPE')),
    ]).toEqual([2, false]);
    const client = createRedisClient(redisTargetOf(config), {
      lazyConnect: true,
      connectionName: 'test',
    });
    expect([
      client.options.name,
      client.options.connectionName,
      client.options.sentinels?.length,
    ]).toEqual(['plantstore', 'test', 2]);
    client.disconnect();
  });

  test('When REDIS_URL is plain redis: without credentials, then no password, database or TLS is set', () => {
    const options = redisConnectionOptions(
      redisTargetOf(
        loadConfig(shape, { REDIS_URL: 'redis://sentinel-managed', REDIS_SENTINELS: 's1:26379' }),
      ),
    );
    expect(
      Object.keys(options).filter((k) =>
        ['username', 'password', 'db', 'tls', 'sentinelPassword'].includes(k),
      ),
    ).toEqual([]);
  });

  test('When production is given a development password inside REDIS_URL for a Sentinel-managed master, then it is refused like any other', () => {
    expect(() =>
      loadConfig(shape, {
        REDIS_URL: 'redis://:dev-only-redis-password@x',
        REDIS_SENTINELS: 's1:26379',
        NODE_ENV: 'production',
      }),
    ).toThrow('configuration error: REDIS_URL is a development value');
    expect(() =>
      loadConfig(shape, {
        REDIS_URL: 'redis://x',
        REDIS_SENTINELS: 's1:26379',
        REDIS_SENTINEL_PASSWORD: 'dev-only-redis-password',
        NODE_ENV: 'production',
      }),
    ).toThrow('configuration error: REDIS_SENTINEL_PASSWORD is a development value');
  });
});

describe('closing a client', () => {
  test('When a client of an unreachable Redis is closed, then no timer of it outlives the close by more than a moment (the process can stop)', async () => {
    // In a process of its own, so only this client's timers are counted. Both counts are taken
    // inside a timer callback (which counts itself): the second one runs 1 s after the close,
    // after the client's disconnect timer (250 ms) and before ioredis' default one (2 s).
    const script = `
      import { createRedisClient } from '${new URL('../dist/redis/index.js', import.meta.url).href}';
      const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const before = await new Promise((resolve) => setTimeout(() => resolve(timers()), 0));
      const redis = createRedisClient('redis://127.0.0.1:1', { maxRetriesPerRequest: 1 });
      redis.on('error', () => {});
      const refused = await redis.set('k', '1').then(() => false, () => true);
      await redis.quit().catch(() => redis.disconnect());
      setTimeout(() => console.log(JSON.stringify({ refused, before, after: timers() })), 1000);
    `;
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--input-type=module',
      '-e',
      script,
    ]);

    expect(JSON.parse(stdout)).toEqual({ refused: true, before: 1, after: 1 });
  });
});
