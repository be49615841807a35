/**
 * Two replicas on one Redis of their own that goes away (a restart, a Sentinel failover): a
 * replica that cannot hear change events must not answer from its credential cache, or a
 * reset made through the other replica meanwhile would leave the old secret working there and
 * the new one refused.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { eventually, startRedisServer, type RedisServer } from '@plant/test-kit';
import { basic, startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';

let redis: RedisServer;
let a: Harness;
let b: Harness;

beforeAll(async () => {
  redis = await startRedisServer();
  [a, b] = await Promise.all([
    startHarness({ REDIS_URL: redis.url }),
    startHarness({ REDIS_URL: redis.url }),
  ]);
});

afterAll(async () => {
  await redis?.start();
  await Promise.all([a?.close(), b?.close()]);
  await redis?.stop();
});

function token(h: Harness, tenant: string, clientId: string, secret: string) {
  return request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });
}

describe('the credential cache while Redis is away', () => {
  test('When Redis is down and a secret is reset through one replica, then the other refuses the old secret and accepts the new one at once, and caches again once Redis is back', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    await token(b, tenant, account.client_id, account.secret).expect(200);

    await redis.stop();
    await eventually(
      () => b.logs.some((line) => line.includes('redis error')),
      'replica B notices Redis is gone',
    );
    const reset = await internal(a).reset(tenant, account.client_id).expect(200);
    const oldAtB = await token(b, tenant, account.client_id, account.secret);
    const newAtB = await token(b, tenant, account.client_id, reset.body.secret);
    const uncached = b.service.identity.clientCredentials.cached(tenant, account.client_id);
    await redis.start();
    // Subscribed again: a grant fills the cache once more.
    await eventually(async () => {
      await token(b, tenant, account.client_id, reset.body.secret).expect(200);
      return b.service.identity.clientCredentials.cached(tenant, account.client_id) !== undefined;
    }, 'replica B caches credentials again');

    expect([oldAtB.status, newAtB.status, uncached]).toEqual([401, 200, undefined]);
  });
});
