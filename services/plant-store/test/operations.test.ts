import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import request from 'supertest';
import type { RevocationChecker } from '@plant/resource-auth';
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

describe('Probes and metrics (the management port)', () => {
  test('When /healthz is asked, then it answers 200 ok', async () => {
    const res = await request(store.managementUrl).get('/healthz');
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { status: 'ok' } });
  });

  test('When the database is reachable, then /readyz answers 200 ready', async () => {
    const res = await request(store.managementUrl).get('/readyz');
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: { status: 'ready' },
    });
  });

  test('When requests were served, then /metrics counts them by route and status with a latency histogram', async () => {
    const tenant = store.newTenant();
    await request(store.url)
      .get('/plants')
      .set('authorization', `Bearer ${store.token(tenant)}`);
    await request(store.url).get('/plants');
    const res = await request(store.managementUrl).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(
      /http_requests_total\{method="GET",route="\/plants",status="200",service="plant-store"\} [1-9]/,
    );
    expect(res.text).toMatch(
      /http_requests_total\{method="GET",route="\/plants",status="401",service="plant-store"\} [1-9]/,
    );
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{service="plant-store",method="GET",route="\/plants",status="200"\} [1-9]/,
    );
    expect(res.text).toMatch(
      /http_request_duration_seconds_bucket\{le="0.005",service="plant-store",method="GET",route="\/plants",status="200"\} \d/,
    );
  });

  test("When a realm's keys were fetched, then /metrics shows the key cache: its entries, what they are charged and its memory budget (JWKS_CACHE_MB)", async () => {
    const tenant = store.newTenant();
    await request(store.url)
      .get('/plants')
      .set('authorization', `Bearer ${store.token(tenant)}`)
      .expect(200);

    const text = (await request(store.managementUrl).get('/metrics')).text;
    const read = (name: string) =>
      Number(
        new RegExp(`^${name}\\{cache="jwks",service="plant-store"\\} (\\S+)$`, 'm').exec(text)?.[1],
      );

    expect(read('cache_entries')).toBeGreaterThanOrEqual(1);
    expect(read('cache_bytes')).toBeGreaterThanOrEqual(512 + 4608);
    expect(read('cache_budget_bytes')).toBe(64 * 1024 * 1024);
    expect(read('cache_evictions_total')).toBe(0);
  });
});

describe('Database outage', () => {
  test('When the database cannot be reached, then /readyz and /plants answer 503 in the Error shape (fail closed, no 500)', async () => {
    const down = await startPlantStore({
      databaseUrl: 'postgres://postgres@127.0.0.1:1/plantstore_test',
    });
    try {
      const ready = await request(down.managementUrl).get('/readyz');
      expect({ status: ready.status, body: ready.body }).toEqual({
        status: 503,
        body: { error: 503, message: 'Not ready: database' },
      });
      const tenant = down.newTenant();
      const list = await request(down.url)
        .get('/plants')
        .set('authorization', `Bearer ${down.token(tenant)}`);
      expectDocumented('GET', '/plants', list);
      expect({ status: list.status, body: list.body }).toEqual({
        status: 503,
        body: { error: 503, message: 'Service temporarily unavailable' },
      });
      const create = await request(down.url)
        .post('/plants')
        .set('authorization', `Bearer ${down.token(tenant)}`)
        .send({ id: 1, name: 'x' });
      expect({ status: create.status, body: create.body }).toEqual({
        status: 503,
        body: { error: 503, message: 'Service temporarily unavailable' },
      });
    } finally {
      await down.close();
    }
  });
});

describe('Readiness with a revocation map', () => {
  test('When the revocation map has not loaded its snapshot, then /readyz answers 503 naming it', async () => {
    let ready = false;
    const revocation: RevocationChecker = { check: () => 'valid', isReady: () => ready };
    const other = await startPlantStore({ revocation });
    try {
      const before = await request(other.managementUrl).get('/readyz');
      expect({ status: before.status, body: before.body }).toEqual({
        status: 503,
        body: { error: 503, message: 'Not ready: revocation' },
      });
      ready = true;
      const after = await request(other.managementUrl).get('/readyz');
      expect({ status: after.status, body: after.body }).toEqual({
        status: 200,
        body: { status: 'ready' },
      });
    } finally {
      await other.close();
    }
  });

  test('When the revocation map says revoked or unavailable, then the Plant Store answers 401 or 503', async () => {
    let verdict: 'valid' | 'revoked' | 'unavailable' = 'valid';
    const revocation: RevocationChecker = { check: () => verdict, isReady: () => true };
    const other = await startPlantStore({ revocation });
    try {
      const tenant = other.newTenant();
      const token = other.token(tenant);
      const ok = await request(other.url).get('/plants').set('authorization', `Bearer ${token}`);
      expect(ok.status).toBe(200);
      verdict = 'revoked';
      const revoked = await request(other.url)
        .get('/plants')
        .set('authorization', `Bearer ${token}`);
      expect({
        status: revoked.status,
        body: revoked.body,
        challenge: revoked.headers['www-authenticate'],
      }).toEqual({
        status: 401,
        body: { error: 401, message: 'Token has been revoked' },
        challenge:
          'Bearer realm="plants", error="invalid_token", error_description="Token has been revoked"',
      });
      verdict = 'unavailable';
      const down = await request(other.url).get('/plants').set('authorization', `Bearer ${token}`);
      expect({ status: down.status, body: down.body }).toEqual({
        status: 503,
        body: { error: 503, message: 'Token verification is temporarily unavailable' },
      });
    } finally {
      await other.close();
    }
  });
});

describe('OpenAPI document', () => {
  test('When /openapi.json is fetched, then it is the 1.0.0 OpenAPI 3.1 description matching the seed field for field', async () => {
    const res = await request(store.url).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const doc = res.body;
    expect(doc).toMatchObject({
      openapi: '3.1.0',
      info: { version: '1.0.0' },
      servers: [{ url: PUBLIC_URL }],
      security: [{ bearerAuth: [] }, { dpopAuth: [] }],
    });
    expect(doc.components.securitySchemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      dpopAuth: {
        type: 'http',
        scheme: 'DPoP',
        bearerFormat: 'JWT',
        description: expect.stringContaining('RFC 9449'),
      },
    });
    const { NewPlant, Plant, Error: ErrorShape } = doc.components.schemas;
    expect({
      required: NewPlant.required,
      fields: Object.keys(NewPlant.properties).sort(),
      id: NewPlant.properties.id,
    }).toEqual({
      required: ['id', 'name'],
      fields: ['id', 'name', 'tag'],
      id: { type: 'integer', format: 'int64', description: 'Identification number of the plant' },
    });
    expect(NewPlant.properties.name).toMatchObject({
      type: 'string',
      minLength: 1,
      maxLength: 255,
    });
    expect(NewPlant.properties.tag).toMatchObject({ type: 'string', minLength: 1, maxLength: 64 });
    expect({ required: Plant.required, fields: Object.keys(Plant.properties).sort() }).toEqual({
      required: ['name'],
      fields: ['name', 'tag'],
    });
    expect(ErrorShape).toMatchObject({
      required: ['error', 'message'],
      properties: { error: { type: 'integer', format: 'int32' }, message: { type: 'string' } },
    });
    const post = doc.paths['/plants'].post;
    expect(post.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
    });
    expect(post.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Plant',
    });
    expect(post.responses['400'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
    const get = doc.paths['/plants'].get;
    expect(get.parameters[0]).toMatchObject({
      name: 'limit',
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    });
    expect(get.responses['200'].content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Plant' },
    });
    expect(get.responses['200'].headers.Link).toMatchObject({ schema: { type: 'string' } });
    for (const status of ['400', '401', '403']) {
      expect(get.responses[status].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/Error',
      });
    }
  });
});

describe('Unknown routes and methods', () => {
  test.each([['/nope'], ['/plants/1'], ['/plants%']])(
    'When %s is requested, then 404 in the Error shape',
    async (path) => {
      const res = await request(store.url).get(path);
      expectDocumented('GET', path, res);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 404, message: expect.any(String) });
      expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
    },
  );

  test.each([['PUT'], ['DELETE'], ['PATCH']])(
    'When %s /plants is requested, then 405 with Allow in the Error shape',
    async (method) => {
      const res = await request(store.url)[method.toLowerCase() as 'put' | 'delete' | 'patch'](
        '/plants',
      );
      expectDocumented(method, '/plants', res);
      expect({ status: res.status, allow: res.headers.allow, body: res.body }).toEqual({
        status: 405,
        allow: 'GET, HEAD, POST',
        body: {
          error: 405,
          message: `Method ${method} is not allowed here; allowed: GET, HEAD, POST`,
        },
      });
    },
  );

  test('When POST /openapi.json is requested, then 405', async () => {
    const res = await request(store.url).post('/openapi.json');
    expect({ status: res.status, body: res.body }).toEqual({
      status: 405,
      body: { error: 405, message: 'Method POST is not allowed here; allowed: GET, HEAD' },
    });
  });

  test('When the request carries an x-request-id, then the response echoes it and the log line carries it', async () => {
    const res = await request(store.url).get('/plants').set('x-request-id', 'trace-abc.123');
    expect(res.headers['x-request-id']).toBe('trace-abc.123');
    const line = store.logs
      .map((l) => JSON.parse(l))
      .find((entry) => entry.reqId === 'trace-abc.123' && entry.msg === 'request completed');
    expect(line).toMatchObject({
      reqId: 'trace-abc.123',
      req: { method: 'GET', path: '/plants' },
      res: { status: 401 },
    });
  });
});

describe('GET and POST /plants', () => {
  // That the hot route and its express twin (`/plants/`, HEAD) answer alike is packages/shared/test/http-app-hot-routes.test.ts.
  test('When requests fail at each step or succeed, then each gets its status', async () => {
    const tenant = store.newTenant();
    const token = store.token(tenant);
    const viewer = store.token(tenant, { role: 'View' });
    const cases: Array<[string, () => request.Test]> = [
      ['no token', () => request(store.url).get('/plants')],
      [
        'malformed token',
        () => request(store.url).get('/plants').set('authorization', 'Bearer not.a.jwt'),
      ],
      [
        'bad limit',
        () => request(store.url).get('/plants?limit=0').set('authorization', `Bearer ${token}`),
      ],
      [
        'repeated limit',
        () =>
          request(store.url).get('/plants?limit=1&limit=2').set('authorization', `Bearer ${token}`),
      ],
      [
        'bad cursor',
        () => request(store.url).get('/plants?cursor=%%%').set('authorization', `Bearer ${token}`),
      ],
      [
        'text body',
        () =>
          request(store.url)
            .post('/plants')
            .set('authorization', `Bearer ${token}`)
            .set('content-type', 'text/plain')
            .send('{}'),
      ],
      [
        'broken JSON',
        () =>
          request(store.url)
            .post('/plants')
            .set('authorization', `Bearer ${token}`)
            .set('content-type', 'application/json')
            .send('{"id":'),
      ],
      [
        'invalid plant',
        () =>
          request(store.url)
            .post('/plants')
            .set('authorization', `Bearer ${token}`)
            .send({ id: -1, name: '' }),
      ],
      [
        'View creating',
        () =>
          request(store.url)
            .post('/plants')
            .set('authorization', `Bearer ${viewer}`)
            .send({ id: 5, name: 'fern' }),
      ],
      [
        'create',
        () =>
          request(store.url)
            .post('/plants')
            .set('authorization', `Bearer ${token}`)
            .send({ id: 7, name: 'fern', tag: 'green' }),
      ],
      [
        'duplicate',
        () =>
          request(store.url)
            .post('/plants')
            .set('authorization', `Bearer ${token}`)
            .send({ id: 7, name: 'fern' }),
      ],
      [
        'list',
        () => request(store.url).get('/plants?limit=1').set('authorization', `Bearer ${token}`),
      ],
    ];

    const statuses: Record<string, number> = {};
    for (const [name, send] of cases) statuses[name] = (await send()).status;

    expect(statuses).toEqual({
      'no token': 401,
      'malformed token': 401,
      'bad limit': 400,
      'repeated limit': 400,
      'bad cursor': 400,
      'text body': 415,
      'broken JSON': 400,
      'invalid plant': 400,
      'View creating': 403,
      create: 200,
      duplicate: 409,
      list: 200,
    });
  });

  test('When /plants/ is asked, then it is the same route as /plants', async () => {
    const tenant = store.newTenant();
    const token = store.token(tenant);
    await request(store.url)
      .post('/plants/')
      .set('authorization', `Bearer ${token}`)
      .send({ id: 3, name: 'fern', tag: 'green' })
      .expect(200);

    const res = await request(store.url).get('/plants/').set('authorization', `Bearer ${token}`);

    expect({
      status: res.status,
      body: res.body,
      cacheControl: res.headers['cache-control'],
    }).toEqual({ status: 200, body: [{ name: 'fern', tag: 'green' }], cacheControl: 'no-store' });
  });
});
