import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startHarness, type Harness } from './helpers/harness.js';
import { AUTH } from './helpers/internal-client.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

function create(tenant: string, name: string) {
  return request(h.internalUrl)
    .post(`/internal/v1/realms/${tenant}/service-accounts`)
    .set('authorization', AUTH)
    .send({ name, actor: 'load' });
}

describe('limits under concurrency', () => {
  test('When 30 accounts are created at once, then exactly 25 exist and 5 got the cap error', async () => {
    const { tenant } = await h.createTenant();

    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => create(tenant, `bot-${i}`)),
    );
    const list = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/service-accounts`)
      .set('authorization', AUTH);

    expect(results.filter((r) => r.status === 201)).toHaveLength(25);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused.map((r) => [r.status, r.body])).toEqual(
      Array(5).fill([
        409,
        { error: 409, message: 'This tenant already has the maximum of 25 service accounts' },
      ]),
    );
    expect(list.body).toHaveLength(25);
  });

  test('When the same name is created 10 times at once in different cases, then exactly one account exists', async () => {
    const { tenant } = await h.createTenant();
    const names = ['Sync', 'sync', 'SYNC', 'sYnc', 'Sync', 'sync', 'SyNc', 'synC', 'SYnc', 'sync'];

    const results = await Promise.all(names.map((name) => create(tenant, name)));
    const list = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/service-accounts`)
      .set('authorization', AUTH);

    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409).map((r) => r.body)).toEqual(
      Array(9).fill({ error: 409, message: 'A service account with this name already exists' }),
    );
    expect(list.body).toHaveLength(1);
  });

  test('When an account is deleted at the cap, then one more can be created', async () => {
    const { tenant } = await h.createTenant();
    const created = await Promise.all(
      Array.from({ length: 25 }, (_, i) => create(tenant, `n-${i}`)),
    );
    await create(tenant, 'one-too-many').expect(409);

    await request(h.internalUrl)
      .delete(`/internal/v1/realms/${tenant}/service-accounts/${created[0]!.body.client_id}`)
      .set('authorization', AUTH)
      .expect(204);
    const res = await create(tenant, 'replacement');

    expect(res.status).toBe(201);
  });

  test('When a secret is reset 5 times at once, then each reset bumps the version once and only the last secret works', async () => {
    const { tenant } = await h.createTenant();
    const account = (await create(tenant, 'racer')).body as { client_id: string };

    const resets = await Promise.all(
      Array.from({ length: 5 }, () =>
        request(h.internalUrl)
          .post(`/internal/v1/realms/${tenant}/service-accounts/${account.client_id}/reset-secret`)
          .set('authorization', AUTH)
          .send({}),
      ),
    );
    const principal = await request(h.internalUrl)
      .get(`/internal/v1/realms/${tenant}/principals/${account.client_id}`)
      .set('authorization', AUTH);
    const outcomes = await Promise.all(
      resets.map((r) =>
        request(h.publicUrl)
          .post(h.tokenUrl(tenant))
          .set('x-forwarded-for', '10.200.0.1')
          .type('form')
          .send({
            grant_type: 'client_credentials',
            client_id: account.client_id,
            client_secret: r.body.secret,
          })
          .then((res) => res.status),
      ),
    );

    expect(resets.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(principal.body.version).toBe(6);
    expect(outcomes.filter((s) => s === 200)).toHaveLength(1);
    expect(outcomes.filter((s) => s === 401)).toHaveLength(4);
  });
});
