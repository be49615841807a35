import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Counter, Registry } from 'prom-client';
import {
  createHttpApp,
  createManagementApp,
  readyWhen,
  sendJson,
  startWebServer,
  type WebServer,
} from '../src/http/index.js';
import { createLogger } from '../src/logging/index.js';

const lines: Array<Record<string, unknown>> = [];
const logger = createLogger({
  name: 'management-test',
  destination: {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  },
});
const registry = new Registry();
new Counter({
  name: 'management_test_marker_total',
  help: 'a metric only this registry has',
  registers: [registry],
}).inc();
let snapshotLoaded = false;
let management: WebServer;
let publicWeb: WebServer;

beforeAll(async () => {
  const readiness = {
    database: () => Promise.resolve(),
    revocation: readyWhen({ isReady: () => snapshotLoaded }, 'revocation snapshot not loaded'),
  };
  management = await startWebServer(createManagementApp({ logger, metrics: registry, readiness }), {
    port: 0,
    host: '127.0.0.1',
  });
  // A public listener recording into the same registry, as every service's does.
  const publicApp = createHttpApp({
    logger,
    metrics: registry,
    routes: [{ method: 'GET', path: '/plants', handlers: [(_req, res) => sendJson(res, 200, [])] }],
  });
  publicWeb = await startWebServer(publicApp, { port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await Promise.all([management.close(100), publicWeb.close(100)]);
});

async function ask(
  web: WebServer,
  path: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${web.url}${path}`, init);
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    allow: res.headers.get('allow'),
    text,
    json: text.startsWith('{') ? (JSON.parse(text) as unknown) : undefined,
  };
}

describe('createManagementApp', () => {
  it('When /healthz is asked, then 200 ok, whatever the dependencies say', async () => {
    expect(await ask(management, '/healthz')).toMatchObject({
      status: 200,
      json: { status: 'ok' },
    });
  });

  it('When a readiness check fails, then /metrics says which one (readiness_check_up 0), and 1 once it passes', async () => {
    snapshotLoaded = false;
    const failing = (await ask(management, '/metrics')).text;
    expect(failing).toMatch(/^readiness_check_up\{check="database"\} 1$/m);
    expect(failing).toMatch(/^readiness_check_up\{check="revocation"\} 0$/m);
    snapshotLoaded = true;
    expect((await ask(management, '/metrics')).text).toMatch(
      /^readiness_check_up\{check="revocation"\} 1$/m,
    );
    snapshotLoaded = false;
  });

  it('When a readiness check fails, then /readyz answers 503 naming it, and 200 ready once it passes', async () => {
    snapshotLoaded = false;
    expect(await ask(management, '/readyz')).toMatchObject({
      status: 503,
      json: { error: 503, message: 'Not ready: revocation' },
    });
    snapshotLoaded = true;
    expect(await ask(management, '/readyz')).toMatchObject({
      status: 200,
      json: { status: 'ready' },
    });
  });

  it('When /metrics is scraped, then it exposes the registry, with what the public listener recorded', async () => {
    await ask(publicWeb, '/plants');

    const scrape = await ask(management, '/metrics');

    expect(scrape).toMatchObject({ status: 200, type: expect.stringMatching(/^text\/plain/) });
    expect(scrape.text).toMatch(/^management_test_marker_total 1$/m);
    expect(scrape.text).toMatch(
      /^http_requests_total\{method="GET",route="\/plants",status="200"\} [1-9]/m,
    );
  });

  it('When another method or path is asked, then 405 with Allow, or 404, in the Error shape', async () => {
    expect(await ask(management, '/metrics', { method: 'POST' })).toMatchObject({
      status: 405,
      allow: 'GET, HEAD',
      json: { error: 405, message: expect.any(String) },
    });
    expect(await ask(management, '/plants')).toMatchObject({
      status: 404,
      json: { error: 404, message: 'No route for GET /plants' },
    });
  });

  it('When probes are polled, then they write no access line and count in no metric; anything else asked there gets its line', async () => {
    const before = (await registry.metrics()).match(/^http_requests_total.*$/gm);
    for (const path of ['/healthz', '/readyz', '/metrics'])
      await ask(management, path, { headers: { 'x-request-id': `quiet-${path.slice(1)}` } });
    await ask(management, '/nope', { headers: { 'x-request-id': 'loud-nope' } });
    await eventuallyLogged('loud-nope');

    expect(lines.filter((line) => String(line.reqId).startsWith('quiet-'))).toEqual([]);
    expect(lines.filter((line) => line.reqId === 'loud-nope')).toEqual([
      expect.objectContaining({ req: { method: 'GET', path: '/nope' }, res: { status: 404 } }),
    ]);
    expect((await registry.metrics()).match(/^http_requests_total.*$/gm)).toEqual(before);
  });
});

describe('A public listener', () => {
  it.each(['/metrics', '/healthz', '/readyz'])(
    'When %s is asked, then it is a 404 in the Error shape, logged like any unknown path',
    async (path) => {
      const id = `public-${path.slice(1)}`;

      const answer = await ask(publicWeb, path, { headers: { 'x-request-id': id } });
      await eventuallyLogged(id);

      expect(answer).toMatchObject({
        status: 404,
        type: expect.stringMatching(/^application\/json/),
        json: { error: 404, message: `No route for GET ${path}` },
      });
      expect(lines.filter((line) => line.reqId === id)).toEqual([
        expect.objectContaining({ res: { status: 404 } }),
      ]);
    },
  );
});

/** Access lines are written when the response closes, just after the client has its answer. */
async function eventuallyLogged(reqId: string): Promise<void> {
  for (let i = 0; i < 100 && !lines.some((line) => line.reqId === reqId); i += 1)
    await new Promise((resolve) => setTimeout(resolve, 10));
}
