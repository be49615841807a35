/**
 * The token endpoint's DPoP nonces (RFC 9449 §8, `DPOP_NONCE_KEYS`) and its replay check with
 * Redis gone (fail closed), on a token service of the file's own and a redis-server of its own.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { dpopKey, startRedisServer, type RedisServer } from '@plant/test-kit';
import { basic, startHarness, type Harness } from './helpers/harness.js';
import { internal, type CreatedAccount } from './helpers/internal-client.js';
import { tokenRequest } from './helpers/token-client.js';

let redis: RedisServer;
let h: Harness;
let tenant: string;
let account: CreatedAccount;

beforeAll(async () => {
  redis = await startRedisServer();
  h = await startHarness({
    REDIS_URL: redis.url,
    DPOP_NONCE_KEYS: 'token-endpoint-nonce-key-0123456789abcdef',
  });
  ({ tenant } = await h.createTenant());
  account = await internal(h).createServiceAccount(tenant);
  await internal(h).patch(tenant, account.client_id, { dpop_bound_access_tokens: true });
});

afterAll(async () => {
  await h?.close();
  await redis?.stop();
});

const grant = (proof: string) =>
  tokenRequest(h, tenant)
    .set('authorization', basic(account.client_id, account.secret))
    .set('dpop', proof)
    .type('form')
    .send({ grant_type: 'client_credentials' });
const htu = () => `${h.publicUrl}${h.tokenUrl(tenant)}`;

describe('DPoP nonces at the token endpoint', () => {
  test('When nonce keys are set and a proof has no nonce, then 400 use_dpop_nonce with one in DPoP-Nonce; the proof with it gets a bound token', async () => {
    const key = dpopKey();
    const first = await grant(key.proof({ htm: 'POST', htu: htu() }));
    const nonce = first.headers['dpop-nonce'];
    expect({ status: first.status, error: first.body.error, nonce: typeof nonce }).toEqual({
      status: 400,
      error: 'use_dpop_nonce',
      nonce: 'string',
    });
    const second = await grant(key.proof({ htm: 'POST', htu: htu(), nonce }));
    expect({ status: second.status, type: second.body.token_type }).toEqual({
      status: 200,
      type: 'DPoP',
    });
  });

  test('When the nonce is made up, then 400 use_dpop_nonce again', async () => {
    const res = await grant(dpopKey().proof({ htm: 'POST', htu: htu(), nonce: 'made-up-nonce' }));
    expect({ status: res.status, error: res.body.error }).toEqual({
      status: 400,
      error: 'use_dpop_nonce',
    });
  });
});

describe('DPoP replay check without Redis', () => {
  test('When Redis is down, then a grant with a valid proof is refused 503 temporarily_unavailable (fail closed), never issued unchecked', async () => {
    const key = dpopKey();
    const nonce = (await grant(key.proof({ htm: 'POST', htu: htu() }))).headers['dpop-nonce'];
    await redis.stop();
    try {
      const res = await grant(key.proof({ htm: 'POST', htu: htu(), nonce }));
      expect({
        status: res.status,
        error: res.body.error,
        retry: res.headers['retry-after'],
        token: res.body.access_token,
      }).toEqual({
        status: 503,
        error: 'temporarily_unavailable',
        retry: '1',
        token: undefined,
      });
    } finally {
      await redis.start();
    }
  });
});
