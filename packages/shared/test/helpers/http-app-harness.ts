/**
 * The test app of the http-app tests: a route table with hot routes and express twins whose
 * handlers answer, fail every way a handler can, or pass on; and `observe`, which sends one
 * request and returns all a client and an operator see of it (answer, log lines, counters).
 */
import { request } from 'node:http';
import { afterAll, beforeAll } from '@jest/globals';
import type { Request, Response } from 'express';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { Forbidden, Unauthorized } from '../../src/api/index.js';
import {
  createHttpApp,
  jsonBody,
  sendJson,
  startWebServer,
  toErrorResponse,
  type NodeHandler,
  type RouteTable,
  type WebServer,
} from '../../src/http/index.js';
import { createLogger, currentRequestId } from '../../src/logging/index.js';

const lines: Array<Record<string, unknown>> = [];
export const logger = createLogger({
  name: 'http-app-test',
  destination: {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  },
});
const registry = new Registry();
/** Which way each request reached its handlers, by request id. */
const ways = new Map<string, 'hot' | 'express'>();

type TestRequest = Parameters<NodeHandler>[0] & {
  id?: string;
  params?: Record<string, string>;
  body?: unknown;
};
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
  next: (_req, _res, next) =>
    next(
      new Unauthorized('Who are you?', { headers: { 'www-authenticate': 'Bearer realm="test"' } }),
    ),
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
  sendJson(res, req.method === 'POST' ? 201 : 200, {
    params: req.params,
    body: req.body ?? null,
    idInContext: currentRequestId() === req.id,
  });
};

const markLayer = (_req: Request, res: Response, next: () => void) => {
  res.setHeader('x-layer', 'ran');
  next();
};

export const table: RouteTable = [
  // Hot routes come first either way: this layer never runs for their paths.
  { use: [markLayer] },
  { method: 'GET', path: '/items', hot: true, handlers: [noteWay, failOrGoOn, answer] },
  {
    method: 'POST',
    path: '/items',
    hot: true,
    handlers: [noteWay, jsonBody(), failOrGoOn, answer],
  },
  { method: 'GET', path: '/things/:id/detail', hot: true, handlers: [noteWay, failOrGoOn, answer] },
  {
    method: 'POST',
    path: '/relay/:id',
    hot: true,
    otherMethods: 'pass',
    handlers: [noteWay, answer],
  },
  {
    path: '/relay/:id',
    use: [(_req: Request, res: Response) => void res.status(299).json({ mounted: true })],
  },
  {
    method: 'GET',
    path: '/other',
    handlers: [(_req: Request, res: Response) => void res.json({ other: true })],
  },
  {
    method: 'GET',
    path: '/page',
    handlers: [
      (req, res, next) => failOrGoOn(req as TestRequest, res, next),
      (req, res, next) =>
        req.query.end === undefined ? void res.type('html').send('<p>page</p>') : next(),
    ],
    onError: (err: unknown, _req: Request, res: Response, _next: () => void) =>
      void res
        .status(toErrorResponse(err).status)
        .type('html')
        .send(`<p>${(err as Error).message}</p>`),
  },
];
let web: WebServer;

/** Serves the table on a free port for the calling test file's tests. */
export function useTestApp(): void {
  beforeAll(async () => {
    web = await startWebServer(createHttpApp({ logger, metrics: registry, routes: table }), {
      port: 0,
      host: '127.0.0.1',
    });
  });
  afterAll(async () => {
    await web.close(100);
  });
}

interface Sent {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

let sentCount = 0;
/** Sends one request with a fresh request id; resolves once its access line is written (metrics are recorded with it). */
async function send(
  method: string,
  path: string,
  body?: { type: string; text: string },
): Promise<Sent & { id: string }> {
  const id = `parity-${++sentCount}`;
  const headers: Record<string, string> = {
    'x-request-id': id,
    ...(body ? { 'content-type': body.type } : {}),
  };
  const sent = await new Promise<Sent>((resolve, reject) => {
    request({ host: '127.0.0.1', port: web.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    })
      .on('error', reject)
      .end(body?.text);
  });
  for (
    let i = 0;
    i < 200 && !lines.some((l) => l.reqId === id && typeof l.responseTime === 'number');
    i++
  )
    await new Promise((r) => setTimeout(r, 5));
  return { ...sent, id };
}

const SERIES = /^http_requests_total\{(.*)\} (\d+)$/;
async function counts(): Promise<Map<string, number>> {
  const text = await registry.metrics();
  return new Map(
    text
      .split('\n')
      .flatMap((l) =>
        SERIES.test(l) ? [[SERIES.exec(l)![1]!, Number(SERIES.exec(l)![2])] as const] : [],
      ),
  );
}

/** Everything a client and an operator see of one request, the request id and path aside. */
export async function observe(method: string, path: string, body?: { type: string; text: string }) {
  const before = await counts();
  const res = await send(method, path, body);
  const after = await counts();
  const metrics = [...after]
    .filter(([series, n]) => n !== (before.get(series) ?? 0))
    .map(([series, n]) => `${series} +${n - (before.get(series) ?? 0)}`);
  const logged = lines
    .filter((l) => l.reqId === res.id)
    .map(
      ({
        time: _t,
        reqId: _r,
        responseTime: _rt,
        service: _s,
        name: _n,
        path: _p,
        req,
        err,
        ...rest
      }): Record<string, unknown> => ({
        ...rest,
        ...(req === undefined ? {} : { method: (req as { method: string }).method }),
        ...(err === undefined ? {} : { err: (err as { message: string }).message }),
      }),
    );
  const pick = [
    'content-type',
    'content-length',
    'cache-control',
    'www-authenticate',
    'allow',
    'x-layer',
  ];
  return {
    way: ways.get(res.id) ?? 'none',
    answer: {
      status: res.status,
      body: res.body,
      headers: Object.fromEntries(pick.map((h) => [h, res.headers[h]])),
      idEchoed: res.headers['x-request-id'] === res.id,
    },
    logged,
    metrics,
  };
}

const json = (text: string) => ({ type: 'application/json', text });
// Every row names its body (undefined too): jest hands a test with more parameters than its row a `done` callback.
export const CASES: Array<[string, string, string, { type: string; text: string } | undefined]> = [
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
