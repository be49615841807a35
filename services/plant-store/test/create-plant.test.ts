import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import request from 'supertest';
import { openApiValidator } from './helpers/openapi-validator.js';
import { startPlantStore, type PlantStoreHarness } from './helpers/plant-store-harness.js';

// RSA key generation per realm and real Postgres round trips: generous under a loaded machine.
jest.setTimeout(20_000);

let store: PlantStoreHarness;
let expectDocumented: Awaited<ReturnType<typeof openApiValidator>>;
let tenant: string;
let token: string;
let nextId = 1000;

beforeAll(async () => {
  store = await startPlantStore();
  expectDocumented = await openApiValidator(store.url);
  tenant = store.newTenant();
  token = store.token(tenant);
});

afterAll(async () => {
  await store.close();
});

function postRaw(body: string, bearer = token, contentType = 'application/json') {
  return request(store.url)
    .post('/plants')
    .set('authorization', `Bearer ${bearer}`)
    .set('content-type', contentType)
    .send(body);
}

async function post(body: unknown, bearer = token) {
  const res = await postRaw(JSON.stringify(body), bearer);
  expectDocumented('POST', '/plants', res);
  return res;
}

async function storedIds(ofTenant: string): Promise<string[]> {
  const rows = await store.db
    .withSchema('plants')
    .table('plants')
    .where({ tenant: ofTenant })
    .orderBy('id')
    .select('id');
  return rows.map((r: { id: string }) => r.id);
}

describe('POST /plants', () => {
  test('When a valid plant is posted, then it answers 200 with the Plant (no id) and lists it', async () => {
    const res = await post({ id: nextId++, name: 'Monstera', tag: 'aroid' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'Monstera', tag: 'aroid' });
    const list = await request(store.url).get('/plants').set('authorization', `Bearer ${token}`);
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual({ name: 'Monstera', tag: 'aroid' });
  });

  test('When the tag is omitted, then the Plant has no tag property', async () => {
    const res = await post({ id: nextId++, name: 'Fern' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'Fern' });
  });

  test('When the ids are the int64 extremes, then both are accepted and stored exactly', async () => {
    const own = store.newTenant();
    const bearer = store.token(own);
    for (const literal of ['9223372036854775807', '-9223372036854775808', '9223372036854775806']) {
      const res = await postRaw(`{"id":${literal},"name":"edge ${literal}"}`, bearer);
      expect({ literal, status: res.status, body: res.body }).toEqual({
        literal,
        status: 200,
        body: { name: `edge ${literal}` },
      });
    }
    expect(await storedIds(own)).toEqual([
      '-9223372036854775808',
      '9223372036854775806',
      '9223372036854775807',
    ]);
    // JSON.parse would round both big ids to the same double; the API keeps them distinct and ordered.
    const again = await postRaw('{"id":9223372036854775807,"name":"again"}', bearer);
    expect(again.status).toBe(409);
    const list = await request(store.url).get('/plants').set('authorization', `Bearer ${bearer}`);
    expect(list.body).toEqual([
      { name: 'edge -9223372036854775808' },
      { name: 'edge 9223372036854775806' },
      { name: 'edge 9223372036854775807' },
    ]);
  });

  test.each([
    [
      'an id above int64',
      '{"id":9223372036854775808,"name":"x"}',
      'id must be an integer between -9223372036854775808 and 9223372036854775807',
    ],
    [
      'an id below int64',
      '{"id":-9223372036854775809,"name":"x"}',
      'id must be an integer between -9223372036854775808 and 9223372036854775807',
    ],
    [
      'a fractional id',
      '{"id":1.5,"name":"x"}',
      'id must be an integer between -9223372036854775808 and 9223372036854775807',
    ],
    [
      'an exponent id',
      '{"id":1e3,"name":"x"}',
      'id must be an integer between -9223372036854775808 and 9223372036854775807',
    ],
    [
      'a string id',
      '{"id":"12","name":"x"}',
      'id must be an integer between -9223372036854775808 and 9223372036854775807',
    ],
    [
      'a null id',
      '{"id":null,"name":"x"}',
      'id must be an integer between -9223372036854775808 and 9223372036854775807',
    ],
    [
      'a missing id',
      '{"name":"x"}',
      'id must be an integer between -9223372036854775808 and 9223372036854775807',
    ],
    ['a missing name', '{"id":1}', 'name is required'],
    ['a numeric name', '{"id":1,"name":5}', 'name must be a string'],
    ['an empty name', '{"id":1,"name":""}', 'name must not be empty'],
    ['a blank name', '{"id":1,"name":"   "}', 'name must not be empty'],
    [
      'a name of 256 characters',
      JSON.stringify({ id: 1, name: 'n'.repeat(256) }),
      'name must be at most 255 characters',
    ],
    [
      'a name with a control character',
      '{"id":1,"name":"bad\\u0007name"}',
      'name must not contain control characters',
    ],
    [
      'a name with a newline',
      '{"id":1,"name":"two\\nlines"}',
      'name must not contain control characters',
    ],
    [
      'a name with a lone surrogate',
      '{"id":1,"name":"\\ud800"}',
      'name must be valid Unicode text',
    ],
    ['an empty tag', '{"id":1,"name":"x","tag":""}', 'tag must not be empty'],
    ['a null tag', '{"id":1,"name":"x","tag":null}', 'tag must be a string'],
    [
      'a tag of 65 characters',
      JSON.stringify({ id: 1, name: 'x', tag: 't'.repeat(65) }),
      'tag must be at most 64 characters',
    ],
    [
      'a tag with a control character',
      '{"id":1,"name":"x","tag":"a\\u001bb"}',
      'tag must not contain control characters',
    ],
    [
      'a name with a right-to-left override',
      '{"id":1,"name":"Aloe\\u202Eera"}',
      'name must not contain invisible or formatting characters (bidi controls, zero-width and the like)',
    ],
    [
      'a name with a zero-width space',
      '{"id":1,"name":"Al\\u200Boe"}',
      'name must not contain invisible or formatting characters (bidi controls, zero-width and the like)',
    ],
    [
      'a name with a private-use character',
      '{"id":1,"name":"\\ue000"}',
      'name must not contain invisible or formatting characters (bidi controls, zero-width and the like)',
    ],
    [
      'a tag with a zero-width joiner',
      '{"id":1,"name":"x","tag":"suc\\u200Dculent"}',
      'tag must not contain invisible or formatting characters (bidi controls, zero-width and the like)',
    ],
    [
      'a tag with a right-to-left isolate',
      '{"id":1,"name":"x","tag":"\\u2067fern"}',
      'tag must not contain invisible or formatting characters (bidi controls, zero-width and the like)',
    ],
    ['malformed JSON', '{"id":1,"name":', 'Request body is not valid JSON'],
    ['duplicate keys', '{"id":1,"id":2,"name":"x"}', 'Request body is not valid JSON'],
    ['an empty body', '', 'Request body is required'],
    ['a JSON array', '[{"id":1,"name":"x"}]', 'Request body must be a JSON object'],
    ['a JSON string', '"plant"', 'Request body must be a JSON object'],
    ['JSON null', 'null', 'Request body must be a JSON object'],
  ])(
    'When the body has %s, then it answers 400 with the Error shape',
    async (_case, body, message) => {
      const res = await postRaw(body);
      expectDocumented('POST', '/plants', res);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { error: 400, message },
      });
      expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
    },
  );

  test('When names and tags are at their bounds (255 and 64 characters, astral code points), then they are accepted', async () => {
    const name = '🌵'.repeat(255);
    const tag = 'ü'.repeat(64);
    const res = await post({ id: nextId++, name, tag });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name, tag });
  });

  test('When the same id is posted twice in one tenant, then the second answers 409 and the first plant stays', async () => {
    const own = store.newTenant();
    const bearer = store.token(own);
    expect((await post({ id: 7, name: 'first' }, bearer)).status).toBe(200);
    const dup = await post({ id: 7, name: 'second' }, bearer);
    expect({ status: dup.status, body: dup.body }).toEqual({
      status: 409,
      body: { error: 409, message: 'A plant with id 7 already exists' },
    });
    const list = await request(store.url).get('/plants').set('authorization', `Bearer ${bearer}`);
    expect(list.body).toEqual([{ name: 'first' }]);
  });

  test('When another tenant uses the same id, then both tenants keep their own plant', async () => {
    const a = store.newTenant();
    const b = store.newTenant();
    expect((await post({ id: 42, name: 'of a' }, store.token(a))).status).toBe(200);
    expect((await post({ id: 42, name: 'of b' }, store.token(b))).status).toBe(200);
    const listA = await request(store.url)
      .get('/plants')
      .set('authorization', `Bearer ${store.token(a)}`);
    const listB = await request(store.url)
      .get('/plants')
      .set('authorization', `Bearer ${store.token(b)}`);
    expect([listA.body, listB.body]).toEqual([[{ name: 'of a' }], [{ name: 'of b' }]]);
  });

  test("When the body comes with a tenant field or header, then the plant still lands in the token's tenant", async () => {
    const a = store.newTenant();
    const b = store.newTenant();
    const res = await request(store.url)
      .post('/plants')
      .set('authorization', `Bearer ${store.token(a)}`)
      .set('x-tenant', b)
      .set('content-type', 'application/json')
      .send(JSON.stringify({ id: 1, name: 'smuggled', tenant: b }));
    expect(res.status).toBe(200);
    expect(await storedIds(a)).toEqual(['1']);
    expect(await storedIds(b)).toEqual([]);
  });

  test('When the body is over 16 KiB, then it answers 413 with the Error shape', async () => {
    const res = await postRaw(JSON.stringify({ id: 1, name: 'x', pad: 'p'.repeat(16 * 1024) }));
    expectDocumented('POST', '/plants', res);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 413,
      body: { error: 413, message: 'Request body must be at most 16384 bytes' },
    });
  });

  test.each([
    ['text/plain'],
    ['application/x-www-form-urlencoded'],
    ['application/json; charset=latin1'],
  ])(
    'When the content type is %s, then it answers 415 with the Error shape',
    async (contentType) => {
      const res = await postRaw('{"id":1,"name":"x"}', token, contentType);
      expectDocumented('POST', '/plants', res);
      expect(res.status).toBe(415);
      expect(res.body).toEqual({
        error: 415,
        message: expect.stringMatching(/application\/json|UTF-8/),
      });
    },
  );

  test('When the content type is missing, then it answers 415', async () => {
    const res = await request(store.url)
      .post('/plants')
      .set('authorization', `Bearer ${token}`)
      .send(Buffer.from('{"id":1,"name":"x"}'));
    expectDocumented('POST', '/plants', res);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 415,
      body: { error: 415, message: 'Content-Type must be application/json' },
    });
  });
});
