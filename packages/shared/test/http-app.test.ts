import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Request, Response } from 'express';
import { Registry } from 'prom-client';
import { z } from 'zod';
import {
  createHttpApp,
  createLogger,
  currentRequestId,
  Forbidden,
  jsonBody,
  sendJson,
  startWebServer,
  toErrorResponse,
  Unauthorized,
  type NodeHandler,
  type RouteTable,
  type WebServer,
} from '../src/index.js';

const lines: Array<Record<string, unknown>> = [];
const logger = createLogger({ name: 'http-app-test', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
const registry = new Registry();
/** Which way each request reached its handlers, by request id. */
const ways = new Map<string, 'hot' | 'express'>();

type TestRequest = Parameters<NodeHandler>[0] & { id?: string; params?: Record<string, string>; body?: unknown };
const noteWay: NodeHandler<TestRequest> = (req, _res, next) => {
  ways.set(req.id!, 'route' in req ? 'express' : 'hot');
  next();
};
const failures: Record<string, NodeHandler<TestRequest>> = {
  sync: () => {
    throw new Error('sync failure');
  },
  async: async () => {
    await new Promise((resolve) => setImmediate(resolve));
    throw new Forbidden('Not yours');
  },
  next: (_req, _res, next) => next(new Unauthorized('Who are you?', { headers: { 'www-authenticate': 'Bearer realm="test"' } })),
  zod: () => z.object({ name: z.string() }).parse({}),
  pass: (_req, _res, next) => next(),
  late: (_req, res) => {
    res.setHeader('cache-control', 'no-store');
    throw new Forbidden('Set a header first');
  },
};
const failOrGoOn: NodeHandler<TestRequest> = (req, res, next) => {
  const mode = new URL(req.url ?? '/', 'http://x').searchParams.get('fail');
  return mode === null ? next() : failures[mode]!(req, res, next);
};
const answer: NodeHandler<TestRequest> = (req, res, next) => {
  if (req.url?.includes('fail=pass') === true) return next();
  res.setHeader('cache-control', 'private');
  sendJson(res, req.method === 'POST' ? 201 : 200, { params: req.params, body: req.body ?? null, idInContext: currentRequestId() === req.id });
};

const markLayer = (_req: Request, res: Response, next: () => void) => {
  res.setHeader('x-layer', 'ran');
  next();
};

const table: RouteTable = [
  // Hot routes come first either way: this layer never runs for their paths.
  { use: [markLayer] },
  { method: 'GET', path: '/items', hot: true, handlers: [noteWay, failOrGoOn, answer] },
  { method: 'POST', path: '/items', hot: true, handlers: [noteWay, jsonBody(), failOrGoOn, answer] },
  { method: 'GET', path: '/things/:id/detail', hot: true, handlers: [noteWay, failOrGoOn, answer] },
  { method: 'POST', path: '/relay/:id', hot: true, otherMethods: 'pass', handlers: [noteWay, answer] },
  { path: '/relay/:id', use: [(_req: Request, res: Response) => void res.status(299).json({ mounted: true })] },
  { method: 'GET', path: '/other', handlers: [(_req: Request, res: Response) => void res.json({ other: true })] },
  {
    method: 'GET',
    path: '/page',
    handlers: [(req, res, next) => failOrGoOn(req as TestRequest, res, next), (req, res, next) => (req.query.end === undefined ? void res.type('html').send('<p>page</p>') : next())],
    onError: (err: unknown, _req: Request, res: Response, _next: () => void) => void res.status(toErrorResponse(err).status).type('html').send(`<p>${(err as Error).message}</p>`),
  },
];
let web: WebServer;

beforeAll(async () => {
  web = await startWebServer(createHttpApp({ logger, metrics: registry, routes: table }), { port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await web.close(100);
});

interface Sent {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

let sentCount = 0;
/** Sends one request with a fresh request id; resolves once its access line is written (metrics are recorded with it). */
async function send(method: string, path: string, body?: { type: string; text: string }): Promise<Sent & { id: string }> {
  const id = `parity-${++sentCount}`;
  const headers: Record<string, string> = { 'x-request-id': id, ...(body ? { 'content-type': body.type } : {}) };
  const sent = await new Promise<Sent>((resolve, reject) => {
    request({ host: '127.0.0.1', port: web.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') }));
    })
      .on('error', reject)
      .end(body?.text);
  });
  for (let i = 0; i < 200 && !lines.some((l) => l.reqId === id && typeof l.responseTime === 'number'); i++) await new Promise((r) => setTimeout(r, 5));
  return { ...sent, id };
}

const SERIES = /^http_requests_total\{(.*)\} (\d+)$/;
async function counts(): Promise<Map<string, number>> {
  const text = await registry.metrics();
  return new Map(text.split('\n').flatMap((l) => (SERIES.test(l) ? [[SERIES.exec(l)![1]!, Number(SERIES.exec(l)![2])] as const] : [])));
}

/** Everything a client and an operator see of one request, the request id and path aside. */
async function observe(method: string, path: string, body?: { type: string; text: string }) {
  const before = await counts();
  const res = await send(method, path, body);
  const after = await counts();
  const metrics = [...after].filter(([series, n]) => n !== (before.get(series) ?? 0)).map(([series, n]) => `${series} +${n - (before.get(series) ?? 0)}`);
  const logged = lines
    .filter((l) => l.reqId === res.id)
    .map(({ time: _t, reqId: _r, responseTime: _rt, service: _s, name: _n, path: _p, req, err, ...rest }): Record<string, unknown> => ({
      ...rest,
      ...(req === undefined ? {} : { method: (req as { method: string }).method }),
      ...(err === undefined ? {} : { err: (err as { message: string }).message }),
    }));
  const pick = ['content-type', 'content-length', 'cache-control', 'www-authenticate', 'allow', 'x-layer'];
  return {
    way: ways.get(res.id) ?? 'none',
    answer: { status: res.status, body: res.body, headers: Object.fromEntries(pick.map((h) => [h, res.headers[h]])), idEchoed: res.headers['x-request-id'] === res.id },
    logged,
    metrics,
  };
}

const json = (text: string) => ({ type: 'application/json', text });
// Every row names its body (undefined too): jest hands a test with more parameters than its row a `done` callback.
const CASES: Array<[string, string, string, { type: string; text: string } | undefined]> = [
  ['list', 'GET', '?limit=1', undefined],
  ['sync throw', 'GET', '?fail=sync', undefined],
  ['async rejection', 'GET', '?fail=async', undefined],
  ['next(err) with a header', 'GET', '?fail=next', undefined],
  ['validation error', 'GET', '?fail=zod', undefined],
  ['header set, then a throw', 'GET', '?fail=late', undefined],
  ['handlers all pass on', 'GET', '?fail=pass', undefined],
  ['create', 'POST', '', json('{"name":"fern"}')],
  ['broken JSON', 'POST', '', json('{"name":')],
  ['wrong media type', 'POST', '', { type: 'text/plain', text: 'fern' }],
  ['empty body', 'POST', '', json('')],
];

describe('a hot route and its express twin', () => {
  it.each(CASES)('When %s reaches /items and /items/, then both answer, log and count alike, one of them hot', async (_name, method, query, body) => {
    const hot = await observe(method, `/items${query}`, body);
    const viaExpress = await observe(method, `/items/${query}`, body);

    expect({ hot: hot.way, viaExpress: viaExpress.way }).toEqual({ hot: 'hot', viaExpress: 'express' });
    expect({ ...viaExpress, way: undefined }).toEqual({ ...hot, way: undefined });
    expect(hot.answer.idEchoed).toBe(true);
    expect(hot.answer.headers['x-layer']).toBeUndefined();
    expect(hot.logged.filter((l) => l.msg !== 'unexpected error')).toEqual([{ level: hot.answer.status >= 500 ? 'error' : 'info', msg: expect.stringMatching(/^request (completed|failed)$/), method, res: { status: hot.answer.status } }]);
    expect(hot.metrics).toEqual([`method="${method}",route="/items",status="${hot.answer.status}" +1`]);
  });

  it('When the handlers answer, fail, throw or pass on, then the statuses are those of the Error shape', async () => {
    const statuses = [];
    for (const [, method, query, body] of CASES) statuses.push((await observe(method, `/items${query}`, body)).answer.status);

    expect(statuses).toEqual([200, 500, 403, 401, 400, 403, 500, 201, 400, 415, 400]);
    expect(JSON.parse((await observe('GET', '/items?fail=sync')).answer.body)).toEqual({ error: 500, message: 'Internal server error' });
    expect((await observe('GET', '/items?fail=sync')).logged).toContainEqual(expect.objectContaining({ msg: 'unexpected error', err: 'sync failure', method: 'GET' }));
  });

  it('When a path has parameters, then the hot way and every spelling express reads alike get the same params and answer', async () => {
    const hot = await observe('GET', '/things/abc/detail');
    const spellings = [];
    for (const path of ['/things/abc/detail/', '/things/a%62c/detail', '/THINGS/abc/detail']) spellings.push(await observe('GET', path));

    expect(hot.way).toBe('hot');
    expect(JSON.parse(hot.answer.body)).toEqual({ params: { id: 'abc' }, body: null, idInContext: true });
    expect(hot.metrics).toEqual(['method="GET",route="/things/:id/detail",status="200" +1']);
    for (const other of spellings) expect(other).toEqual({ ...hot, way: 'express' });
  });

  it('When another method reaches a declared path, then 405 with Allow (HEAD after GET) in the Error shape, counted under the template', async () => {
    const res = await observe('PUT', '/items');
    const slash = await observe('DELETE', '/items/');

    expect(res.answer).toMatchObject({ status: 405, headers: { allow: 'GET, HEAD, POST', 'x-layer': undefined } });
    expect(JSON.parse(res.answer.body)).toEqual({ error: 405, message: 'Method PUT is not allowed here; allowed: GET, HEAD, POST' });
    expect(res.metrics).toEqual(['method="PUT",route="/items",status="405" +1']);
    expect(slash.metrics).toEqual(['method="DELETE",route="/items",status="405" +1']);
    expect(res.logged).toEqual([{ level: 'info', msg: 'request completed', method: 'PUT', res: { status: 405 } }]);
  });

  it('When HEAD asks for a hot GET route, then express answers with the GET answer without its body', async () => {
    const get = await observe('GET', '/items');
    const head = await observe('HEAD', '/items');

    expect(head.way).toBe('express');
    expect(head.answer).toEqual({ ...get.answer, body: '' });
  });

  it('When a hot route passes other methods on, then its path is served by the later layer, and the hot way matches exactly', async () => {
    const hot = await observe('POST', '/relay/abc');
    const encoded = await observe('POST', '/relay/a%62c');
    const mounted = await observe('GET', '/relay/abc');

    expect([hot.way, encoded.way]).toEqual(['hot', 'express']);
    expect({ ...encoded, way: 'hot' }).toEqual(hot);
    expect(mounted.answer).toMatchObject({ status: 299, body: '{"mounted":true}', headers: { 'x-layer': 'ran' } });
  });

  it("When a route declares onError, then its handlers' errors, passing on included, reach it, while another method on its path gets the 405 in the Error shape", async () => {
    const answers = [];
    for (const [method, path] of [['GET', '/page'], ['GET', '/page?fail=async'], ['GET', '/page?fail=sync'], ['GET', '/page?end=1'], ['PUT', '/page']] as const) {
      const { answer } = await observe(method, path);
      answers.push({ path, status: answer.status, type: answer.headers['content-type'], body: answer.body });
    }

    expect(answers).toEqual([
      { path: '/page', status: 200, type: 'text/html; charset=utf-8', body: '<p>page</p>' },
      { path: '/page?fail=async', status: 403, type: 'text/html; charset=utf-8', body: '<p>Not yours</p>' },
      { path: '/page?fail=sync', status: 500, type: 'text/html; charset=utf-8', body: '<p>sync failure</p>' },
      { path: '/page?end=1', status: 500, type: 'text/html; charset=utf-8', body: '<p>The handlers of GET passed the request on without answering</p>' },
      { path: '/page', status: 405, type: 'application/json; charset=utf-8', body: JSON.stringify({ error: 405, message: 'Method PUT is not allowed here; allowed: GET, HEAD' }) },
    ]);
  });

  it('When the table is read, then it lists every route as data, and unknown paths are 404', async () => {
    const app = createHttpApp({ logger, routes: table });
    const other = await observe('GET', '/other');
    const unknown = await observe('GET', '/nowhere');

    expect(app.routes.map(({ method, path, hot }) => `${method} ${path}${hot ? ' (hot)' : ''}`)).toEqual([
      'GET /items (hot)',
      'POST /items (hot)',
      'GET /things/:id/detail (hot)',
      'POST /relay/:id (hot)',
      'GET /other',
      'GET /page',
    ]);
    expect(other.answer).toMatchObject({ status: 200, headers: { 'x-layer': 'ran' } });
    expect([unknown.answer.status, JSON.parse(unknown.answer.body)]).toEqual([404, { error: 404, message: 'No route for GET /nowhere' }]);
    expect(unknown.metrics).toEqual(['method="GET",route="unmatched",status="404" +1']);
  });
});
