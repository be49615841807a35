import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import request from 'supertest';
import { openApiValidator } from './helpers/openapi-validator.js';
import {
  PUBLIC_URL,
  startPlantStore,
  type PlantStoreHarness,
} from './helpers/plant-store-harness.js';

// RSA key generation per realm and real Postgres round trips: generous under a loaded machine.
jest.setTimeout(20_000);

let store: PlantStoreHarness;
let expectDocumented: Awaited<ReturnType<typeof openApiValidator>>;

beforeAll(async () => {
  store = await startPlantStore();
  expectDocumented = await openApiValidator(store.url);
});

afterAll(async () => {
  await store.close();
});

async function get(pathAndQuery: string, bearer: string) {
  const res = await request(store.url).get(pathAndQuery).set('authorization', `Bearer ${bearer}`);
  expectDocumented('GET', '/plants', res);
  return res;
}

async function create(bearer: string, id: number | string, name: string) {
  const res = await request(store.url)
    .post('/plants')
    .set('authorization', `Bearer ${bearer}`)
    .set('content-type', 'application/json')
    .send(`{"id":${id},"name":${JSON.stringify(name)}}`);
  expect({ id, status: res.status }).toEqual({ id, status: 200 });
}

/** A tenant with plants named p<id> for each id, created in shuffled order. */
async function tenantWith(ids: number[]): Promise<string> {
  const tenant = store.newTenant();
  const bearer = store.token(tenant);
  const shuffled = [...ids].sort(() => Math.random() - 0.5);
  for (const id of shuffled) await create(bearer, id, `p${id}`);
  return tenant;
}

const LINK = /^<([^>]+)>; rel="next"$/;

/** Follows `Link: rel="next"` from `first`, returning every page; asserts each link's form. */
async function followPages(bearer: string, first: string, between?: () => Promise<void>) {
  const pages: Array<Array<{ name: string }>> = [];
  let next: string | undefined = first;
  while (next !== undefined) {
    const res = await get(next, bearer);
    expect(res.status).toBe(200);
    pages.push(res.body);
    const link = res.headers.link as string | undefined;
    if (link === undefined) {
      next = undefined;
    } else {
      const url = LINK.exec(link)?.[1];
      expect(url).toMatch(new RegExp(`^${PUBLIC_URL}/plants\\?limit=\\d+&cursor=[A-Za-z0-9_-]+$`));
      next = url!.slice(PUBLIC_URL.length);
      if (between) await between();
    }
    if (pages.length > 100) throw new Error('pagination does not terminate');
  }
  return pages;
}

describe('GET /plants', () => {
  test('When a tenant has no plants, then it answers 200 with an empty array and no Link', async () => {
    const tenant = store.newTenant();
    const res = await get('/plants', store.token(tenant));
    expect({ status: res.status, body: res.body, link: res.headers.link }).toEqual({
      status: 200,
      body: [],
      link: undefined,
    });
  });

  test('When plants were created in random order, then they are listed in ascending id order', async () => {
    const tenant = await tenantWith([5, -3, 12, 0, 7]);
    const res = await get('/plants', store.token(tenant));
    expect(res.body).toEqual([
      { name: 'p-3' },
      { name: 'p0' },
      { name: 'p5' },
      { name: 'p7' },
      { name: 'p12' },
    ]);
    expect(res.headers.link).toBeUndefined();
  });

  test('When no limit is given, then at most 100 plants come back with a Link to the rest', async () => {
    const tenant = store.newTenant();
    const bearer = store.token(tenant);
    await Promise.all(Array.from({ length: 101 }, (_, i) => create(bearer, i, `p${i}`)));
    const res = await get('/plants', bearer);
    expect(res.body).toHaveLength(100);
    expect(res.body[99]).toEqual({ name: 'p99' });
    expect(res.headers.link).toMatch(
      new RegExp(`^<${PUBLIC_URL}/plants\\?limit=100&cursor=[A-Za-z0-9_-]+>; rel="next"$`),
    );
    const rest = await get(
      LINK.exec(res.headers.link as string)![1]!.slice(PUBLIC_URL.length),
      bearer,
    );
    expect({ body: rest.body, link: rest.headers.link }).toEqual({
      body: [{ name: 'p100' }],
      link: undefined,
    });
  });

  test('When exactly limit plants exist, then there is no Link header', async () => {
    const tenant = await tenantWith([1, 2, 3]);
    const res = await get('/plants?limit=3', store.token(tenant));
    expect({ body: res.body, link: res.headers.link }).toEqual({
      body: [{ name: 'p1' }, { name: 'p2' }, { name: 'p3' }],
      link: undefined,
    });
  });

  test('When limit is 1 and 1000, then both are accepted', async () => {
    const tenant = await tenantWith([1, 2]);
    const bearer = store.token(tenant);
    const one = await get('/plants?limit=1', bearer);
    expect(one.body).toEqual([{ name: 'p1' }]);
    expect(one.headers.link).toMatch(/limit=1&cursor=/);
    const max = await get('/plants?limit=1000', bearer);
    expect({ body: max.body, link: max.headers.link }).toEqual({
      body: [{ name: 'p1' }, { name: 'p2' }],
      link: undefined,
    });
  });

  test.each([
    ['0'],
    ['1001'],
    ['-1'],
    ['abc'],
    [''],
    ['1.5'],
    ['1e2'],
    ['01'],
    ['+5'],
    ['99999999999999999999'],
    [' 5'],
  ])('When limit is %j, then it answers 400 with the Error shape', async (limit) => {
    const tenant = store.newTenant();
    const res = await get(`/plants?limit=${encodeURIComponent(limit)}`, store.token(tenant));
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { error: 400, message: 'limit must be an integer between 1 and 1000' },
    });
  });

  test('When limit is given twice, then it answers 400', async () => {
    const res = await get('/plants?limit=1&limit=2', store.token(store.newTenant()));
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { error: 400, message: 'limit must be given at most once' },
    });
  });

  test.each([
    ['not base64url', '!!!'],
    ['base64url of garbage', Buffer.from('hello').toString('base64url')],
    ['an id beyond int64', Buffer.from('v1:9223372036854775808').toString('base64url')],
    ['a non-canonical id', Buffer.from('v1:007').toString('base64url')],
    ['an empty cursor', ''],
    ['an overlong cursor', 'A'.repeat(100)],
  ])('When the cursor is %s, then it answers 400 with the Error shape', async (_case, cursor) => {
    const res = await get(
      `/plants?cursor=${encodeURIComponent(cursor)}`,
      store.token(store.newTenant()),
    );
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { error: 400, message: 'cursor is invalid: use the Link header of the previous page' },
    });
  });

  test('When following the Link headers, then every plant comes back exactly once in ascending order', async () => {
    const ids = Array.from({ length: 23 }, (_, i) => i * 3 - 20);
    const tenant = await tenantWith(ids);
    const pages = await followPages(store.token(tenant), '/plants?limit=5');
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat()).toEqual(ids.map((id) => ({ name: `p${id}` })));
  });

  test('When plants are inserted while a client pages through, then every pre-existing plant is listed exactly once', async () => {
    const initial = Array.from({ length: 30 }, (_, i) => i * 10);
    const tenant = await tenantWith(initial);
    const bearer = store.token(tenant);
    let nextNew = 0;
    // Between pages, add plants both behind and ahead of the cursor.
    const insertSome = async () => {
      const before = nextNew * 10 + 1;
      const after = 1000 + nextNew;
      nextNew += 1;
      await Promise.all([create(bearer, before, `p${before}`), create(bearer, after, `p${after}`)]);
    };
    const pages = await followPages(bearer, '/plants?limit=4', insertSome);
    const names = pages.flat().map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    for (const id of initial) expect(names.filter((n) => n === `p${id}`)).toHaveLength(1);
    const listedIds = names.map((n) => Number(n.slice(1)));
    expect(listedIds).toEqual([...listedIds].sort((a, b) => a - b));
  });

  test('When following links across the int64 extremes, then the cursor keeps exact ids', async () => {
    const tenant = store.newTenant();
    const bearer = store.token(tenant);
    for (const id of [
      '-9223372036854775808',
      '-9223372036854775807',
      '9223372036854775806',
      '9223372036854775807',
    ]) {
      await create(bearer, id, `p${id}`);
    }
    const pages = await followPages(bearer, '/plants?limit=1');
    expect(pages.flat()).toEqual([
      { name: 'p-9223372036854775808' },
      { name: 'p-9223372036854775807' },
      { name: 'p9223372036854775806' },
      { name: 'p9223372036854775807' },
    ]);
  });

  test('When a cursor of tenant A is used by tenant B, then B only sees its own plants', async () => {
    const a = await tenantWith([1, 2, 3]);
    const b = await tenantWith([4, 5]);
    const first = await get('/plants?limit=1', store.token(a));
    const next = LINK.exec(first.headers.link as string)![1]!.slice(PUBLIC_URL.length);
    const res = await get(next, store.token(b));
    expect(res.body).toEqual([{ name: 'p4' }]);
  });
});
