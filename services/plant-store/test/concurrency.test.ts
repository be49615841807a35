import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import request from 'supertest';
import { startPlantStore, type PlantStoreHarness } from './helpers/plant-store-harness.js';

// RSA key generation per realm and real Postgres round trips: generous under a loaded machine.
jest.setTimeout(20_000);

let store: PlantStoreHarness;

beforeAll(async () => {
  store = await startPlantStore();
});

afterAll(async () => {
  await store.close();
});

const create = (bearer: string, id: number, name: string) =>
  request(store.url)
    .post('/plants')
    .set('authorization', `Bearer ${bearer}`)
    .set('content-type', 'application/json')
    .send({ id, name });

describe('Concurrent creation', () => {
  test('When many distinct and duplicate ids are created in parallel, then every 200 is listed and each duplicate id has exactly one 200', async () => {
    const tenant = store.newTenant();
    const bearer = store.token(tenant);
    const distinct = Array.from({ length: 60 }, (_, i) => ({ id: i, name: `distinct-${i}` }));
    const duplicates = [1000, 1001, 1002].flatMap((id) =>
      Array.from({ length: 10 }, (_, n) => ({ id, name: `dup-${id}-${n}` })),
    );
    const attempts = [...distinct, ...duplicates].sort(() => Math.random() - 0.5);

    const results = await Promise.all(
      attempts.map(async (a) => ({ ...a, res: await create(bearer, a.id, a.name) })),
    );

    for (const { res } of results) expect([200, 409]).toContain(res.status);
    const created = results.filter((r) => r.res.status === 200);
    for (const id of [1000, 1001, 1002]) {
      const forId = results.filter((r) => r.id === id);
      expect(forId.filter((r) => r.res.status === 200)).toHaveLength(1);
      for (const r of forId.filter((x) => x.res.status !== 200)) {
        expect(r.res.body).toEqual({ error: 409, message: `A plant with id ${id} already exists` });
      }
    }
    expect(results.filter((r) => r.id < 1000).every((r) => r.res.status === 200)).toBe(true);

    const listed = await request(store.url)
      .get('/plants?limit=1000')
      .set('authorization', `Bearer ${bearer}`);
    const expected = created.sort((x, y) => x.id - y.id).map((r) => ({ name: r.name }));
    expect(listed.body).toEqual(expected);
    expect(listed.body).toHaveLength(63);
  });

  test('When two tenants create the same ids in parallel, then neither collides with the other', async () => {
    const a = store.newTenant();
    const b = store.newTenant();
    const ids = Array.from({ length: 20 }, (_, i) => i);
    const results = await Promise.all(
      ids.flatMap((id) => [
        create(store.token(a), id, `a${id}`),
        create(store.token(b), id, `b${id}`),
      ]),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const listA = await request(store.url)
      .get('/plants')
      .set('authorization', `Bearer ${store.token(a)}`);
    const listB = await request(store.url)
      .get('/plants')
      .set('authorization', `Bearer ${store.token(b)}`);
    expect(listA.body).toEqual(ids.map((id) => ({ name: `a${id}` })));
    expect(listB.body).toEqual(ids.map((id) => ({ name: `b${id}` })));
  });
});
