import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import { startRedisServer, startSentinelGroup, TEST_REDIS_URL } from '../src/index.js';

const run = promisify(execFile);

describe("a test file's Redis", () => {
  test('When a test file starts, then TEST_REDIS_URL is a redis-server of its own: no other client, no channel subscribed, no key', async () => {
    const port = new URL(TEST_REDIS_URL).port;
    const cli = async (...args: string[]) =>
      (await run('redis-cli', ['-p', port, ...args])).stdout.trim();
    // The shared Redis has other suites' clients, subscriptions and keys; a file's own has none.
    expect({
      port,
      clients: (await cli('CLIENT', 'LIST')).split('\n').length,
      channels: await cli('PUBSUB', 'CHANNELS'),
      keys: await cli('DBSIZE'),
    }).toEqual({
      port: expect.not.stringMatching(/^(6379)?$/),
      clients: 1,
      channels: '',
      keys: '0',
    });
  });

  test('When test redis-servers save (a SAVE, a replica syncing from its master), then nothing lands in the working directory', async () => {
    const rdbFiles = () => readdirSync(process.cwd()).filter((f) => f.endsWith('.rdb'));
    const before = rdbFiles();
    const own = await startRedisServer();
    const group = await startSentinelGroup({ replicas: 1, sentinels: 1 });
    try {
      await own.cli('SET', 'k', 'v');
      expect(await own.cli('SAVE')).toBe('OK');
      await group.cli(group.servers[0]!.port, 'SET', 'k', 'v');
      expect(await group.cli(group.servers[0]!.port, 'SAVE')).toBe('OK');
    } finally {
      await group.stop();
      await own.stop();
    }
    expect(rdbFiles()).toEqual(before);
  });
});
