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

function token(h: Harness, tenant: string, clientId: string, secret: string) {
  return request(h.publicUrl).post(h.tokenUrl(tenant)).set('x-forwarded-for', uniqueIp()).set('authorization', basic(clientId, secret)).type('form').send({ grant_type: 'client_credentials' });
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
});
