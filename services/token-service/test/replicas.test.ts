import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { basic, startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { internal } from './helpers/internal-client.js';

/** Two replicas of the service on the same Postgres and Redis, each with its own caches. */
let a: Harness;
let b: Harness;

beforeAll(async () => {
  [a, b] = await Promise.all([startHarness(), startHarness()]);
});

afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

/** A client_credentials grant at replica `h`, from `ip` (a fresh address unless given). */
function token(h: Harness, tenant: string, clientId: string, secret: string, ip = uniqueIp()) {
  return request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', ip)
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });
}

describe('across replicas', () => {
  test('When a secret is reset through one replica, then the other refuses the old secret (its cached client was dropped by the event)', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    // Warm replica B's client cache with the current secret.
    await token(b, tenant, account.client_id, account.secret).expect(200);

    const reset = await internal(a).reset(tenant, account.client_id).expect(200);
    const oldAtB = await token(b, tenant, account.client_id, account.secret);
    const newAtB = await token(b, tenant, account.client_id, reset.body.secret);

    expect(oldAtB.status).toBe(401);
    expect(newAtB.status).toBe(200);
  });

  test('When an account is deleted through one replica, then the other refuses it', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    await token(b, tenant, account.client_id, account.secret).expect(200);

    await internal(a).remove(tenant, account.client_id).expect(204);
    const atB = await token(b, tenant, account.client_id, account.secret);

    expect(atB.status).toBe(401);
  });

  test('When a role changes through one replica, then the other mints tokens with the new role and version', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    await token(b, tenant, account.client_id, account.secret).expect(200);

    await internal(a).patch(tenant, account.client_id, { role: 'Edit' }).expect(200);
    const atB = await token(b, tenant, account.client_id, account.secret);

    expect(atB.status).toBe(200);
    expect(atB.body.scope).toBe('plants:read plants:write');
  });

  test('When an address fails a client authentication on one replica, then the other stops it too, even though it had seen only clean grants from it', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    const attacker = uniqueIp();
    const from = (h: Harness, secret: string) =>
      token(h, tenant, account.client_id, secret, attacker);
    await from(b, account.secret).expect(200);

    const limit = a.config.CLIENT_AUTH_FAILURES_PER_CLIENT_IP;
    const failures = [];
    for (let i = 0; i < limit; i += 1) failures.push((await from(a, 'pss_guess')).status);
    const atB = await from(b, account.secret);

    expect(failures).toEqual(Array.from({ length: limit }, () => 401));
    expect(atB.status).toBe(429);
    expect(atB.body).toEqual({
      error: 'too_many_requests',
      error_description: 'too many failed client authentications; retry later',
    });
  });

  test('When a replica starts after an address failed elsewhere, then it stops that address from its first request', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    const attacker = uniqueIp();
    const from = (h: Harness, secret: string) =>
      token(h, tenant, account.client_id, secret, attacker);
    for (let i = 0; i < a.config.CLIENT_AUTH_FAILURES_PER_CLIENT_IP; i += 1)
      await from(a, 'pss_guess').expect(401);

    const c = await startHarness();
    try {
      const atC = await from(c, account.secret);
      const elsewhere = await token(c, tenant, account.client_id, account.secret);

      expect(atC.status).toBe(429);
      expect(elsewhere.status).toBe(200);
    } finally {
      await c.close();
    }
  });
});
