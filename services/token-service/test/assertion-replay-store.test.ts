/**
 * The jti of a private_key_jwt assertion is claimed in Redis, shared by every replica. Two
 * replicas on one Redis accept a given assertion once between them; with Redis stopped, an
 * assertion is refused (it could be replayed) while secrets keep working.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { clientAssertion, startRedisServer, type RedisServer } from '@plant/test-kit';
import { basic, startHarness, type Harness } from './helpers/harness.js';
import { keyedAccount, sendAssertion } from './helpers/assertion-client.js';
import { tokenRequest } from './helpers/token-client.js';

let redis: RedisServer;
let a: Harness;
let b: Harness;
let tenant: string;

beforeAll(async () => {
  redis = await startRedisServer();
  [a, b] = await Promise.all([
    startHarness({ REDIS_URL: redis.url }),
    startHarness({ REDIS_URL: redis.url }),
  ]);
  ({ tenant } = await a.createTenant());
});

afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  await redis.stop();
});

describe('the jti store', () => {
  test('When one assertion is sent to two replicas at once, ten times each, then exactly one token is issued between them', async () => {
    const keyed = await keyedAccount(a, tenant);
    const assertion = clientAssertion({
      clientId: keyed.account.client_id,
      audience: a.issuer(tenant),
      key: keyed.key,
      kid: keyed.kid,
    });

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        sendAssertion(i % 2 === 0 ? a : b, tenant, keyed.account.client_id, assertion),
      ),
    );

    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(401)]);
  });

  test('When an assertion is accepted, then its jti is kept only until it could not be accepted anyway (its exp plus the skew), as a digest', async () => {
    const keyed = await keyedAccount(a, tenant);
    const jti = `jti-${Date.now()}`;
    const assertion = clientAssertion({
      clientId: keyed.account.client_id,
      audience: a.issuer(tenant),
      key: keyed.key,
      kid: keyed.kid,
      claims: { jti, exp: Math.floor(Date.now() / 1000) + 30 },
    });

    await sendAssertion(a, tenant, keyed.account.client_id, assertion).expect(200);
    const keys = (await redis.cli('--scan', '--pattern', 'plantstore:assertion-jti:*'))
      .split('\n')
      .filter(Boolean);
    const ttls = await Promise.all(keys.map(async (key) => Number(await redis.cli('TTL', key))));

    expect(keys.some((key) => key.includes(jti))).toBe(false);
    expect(ttls.length).toBeGreaterThan(0);
    // Every key of this file's Redis: none outlives the five minutes (plus skew) an assertion may live.
    expect(ttls.every((ttl) => ttl > 0 && ttl <= 310)).toBe(true);
    expect(Math.min(...ttls)).toBeLessThanOrEqual(40);
  });

  test('When Redis is down, then an assertion is refused with 503 and Retry-After (fail closed), a secret still gets a token, and once Redis is back the assertion works', async () => {
    const keyed = await keyedAccount(a, tenant);
    const fresh = () =>
      clientAssertion({
        clientId: keyed.account.client_id,
        audience: a.issuer(tenant),
        key: keyed.key,
        kid: keyed.kid,
      });
    await sendAssertion(a, tenant, keyed.account.client_id, fresh()).expect(200);

    await redis.stop();
    try {
      const refused = await sendAssertion(a, tenant, keyed.account.client_id, fresh());
      const bySecret = await tokenRequest(a, tenant)
        .set('authorization', basic(keyed.account.client_id, keyed.account.secret))
        .type('form')
        .send({ grant_type: 'client_credentials' });

      expect({
        status: refused.status,
        retryAfter: refused.headers['retry-after'],
        body: refused.body,
      }).toEqual({
        status: 503,
        retryAfter: '1',
        body: {
          error: 'temporarily_unavailable',
          error_description: 'the service is temporarily unavailable; retry shortly',
        },
      });
      expect(bySecret.status).toBe(200);
    } finally {
      await redis.start();
    }
    let back = 0;
    for (let i = 0; i < 50 && back !== 200; i += 1) {
      back = (await sendAssertion(a, tenant, keyed.account.client_id, fresh())).status;
      if (back !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(back).toBe(200);
  });
});
