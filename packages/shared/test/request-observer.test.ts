import { createServer, request, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  addAccessLogFields,
  createRequestObserver,
  type HttpObservabilityOptions,
} from '../src/http/index.js';
import { createLogger, currentRequestId } from '../src/logging/index.js';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** Serves one request through an observer; resolves to the id the handler saw in the request context after an await, and the log lines. */
async function observeOne(
  options: Partial<HttpObservabilityOptions>,
  fields: Array<Record<string, unknown>> = [],
): Promise<{
  inContext: string | undefined;
  header: string | undefined;
  lines: Array<Record<string, unknown>>;
}> {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const observe = createRequestObserver({
    logger: createLogger({ name: 'observer-test', destination }),
    ...options,
  });
  let inContext: string | undefined;
  server = createServer((req, res) => {
    observe(
      req,
      res,
      () => '/probe',
      () => {
        void (async () => {
          await new Promise((resolve) => setImmediate(resolve));
          for (const added of fields) addAccessLogFields(req, added);
          inContext = currentRequestId();
          res.end('ok');
        })();
      },
    );
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const header = await new Promise<string | undefined>((resolve, reject) => {
    request(
      { host: '127.0.0.1', port, path: '/probe', headers: { 'x-request-id': 'observer-probe-1' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers['x-request-id'] as string | undefined));
      },
    )
      .on('error', reject)
      .end();
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { inContext, header, lines };
}

describe('request observer', () => {
  it('When a request is observed, then its id is in the request context across awaits, on the response and on its access line', async () => {
    const { inContext, header, lines } = await observeOne({});

    expect(inContext).toBe('observer-probe-1');
    expect(header).toBe('observer-probe-1');
    expect(lines).toEqual([
      expect.objectContaining({
        reqId: 'observer-probe-1',
        msg: 'request completed',
        req: { method: 'GET', path: '/probe' },
      }),
    ]);
  });

  it('When a route adds fields, then they are on its one access line, before msg and still valid JSON', async () => {
    const { lines } = await observeOne({}, [
      { on_behalf_of: { tenant: 'acme', sub: 'sa-1', actors: ['sa-2', 'sa"3'] } },
      {},
      { chain_depth: 2 },
    ]);

    expect(lines).toEqual([
      expect.objectContaining({
        reqId: 'observer-probe-1',
        msg: 'request completed',
        on_behalf_of: { tenant: 'acme', sub: 'sa-1', actors: ['sa-2', 'sa"3'] },
        chain_depth: 2,
      }),
    ]);
  });

  it('When the request context is off, then nothing enters it, and the response and access line still carry the id', async () => {
    const { inContext, header, lines } = await observeOne({ requestContext: false });

    expect(inContext).toBeUndefined();
    expect(header).toBe('observer-probe-1');
    expect(lines).toEqual([
      expect.objectContaining({ reqId: 'observer-probe-1', msg: 'request completed' }),
    ]);
  });
});
