// Jest test environment: Node's, plus a redis-server of the test file's own, whose URL the
// file reads as TEST_REDIS_URL (packages/test-kit/src/env.ts). Plain ESM over the built
// test-kit (`pnpm test` builds first), because jest loads it outside its module transform.
//
// Why a server per file rather than one shared Redis: pub/sub channels are global to a
// server (database numbers do not separate them), and the services' key prefixes are fixed
// names. On one shared Redis a suite heard another's messages (a forged 'not json' on the
// revocation channel failed an unrelated suite) and counted on another's throttle keys
// (every local request comes from 127.0.0.1). A redis-server starts in milliseconds; with
// its own, no suite can hear or count another's.
import { TestEnvironment } from 'jest-environment-node';
import { startRedisServer } from './dist/redis-server.js';

export default class OwnRedisEnvironment extends TestEnvironment {
  /** @type {import('./dist/redis-server.js').RedisServer | undefined} */
  redis;

  async setup() {
    await super.setup();
    this.redis = await startRedisServer();
    // The file's process.env is a copy of the worker's: this reaches this file alone, and the
    // services it spawns with its env.
    this.global.process.env.TEST_REDIS_URL = this.redis.url;
  }

  async teardown() {
    await this.redis?.stop();
    await super.teardown();
  }
}
