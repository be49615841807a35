import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jsonBody, keepingRequestContext } from '../src/http/json-body.js';
import { currentRequestId, requestContext } from '../src/logging/request-context.js';
import { RequestContextManager } from '../src/tracing/request-context-manager.js';

const KEY = createContextKey('test key');
const traced = (value: string) => ROOT_CONTEXT.setValue(KEY, value);
const activeValue = () => context.active().getValue(KEY);

beforeAll(() => {
  context.setGlobalContextManager(new RequestContextManager());
});
afterAll(() => {
  context.disable();
});

describe("OpenTelemetry's context in the request context's store", () => {
  test('When no request is being served, then the active context is the root', () => {
    expect(context.active()).toBe(ROOT_CONTEXT);
  });

  test("When a request's store holds a context, then that context is active through its awaits", async () => {
    const seen = await requestContext.run({ requestId: 'r-1', trace: traced('a') }, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return activeValue();
    });
    expect(seen).toBe('a');
  });

  test('When a span runs work in a context, then the request id stays and the context applies inside only', async () => {
    const inside = await requestContext.run({ requestId: 'r-2', trace: undefined }, () =>
      context.with(traced('b'), async () => {
        await Promise.resolve();
        return { id: currentRequestId(), value: activeValue() };
      }),
    );
    expect(inside).toEqual({ id: 'r-2', value: 'b' });
    expect(activeValue()).toBeUndefined();
  });

  test('When `with` is given a receiver and arguments, then the function gets both', () => {
    const receiver = { base: 40 };
    const sum = context.with(
      traced('c'),
      function (this: { base: number }, n: number) {
        return this.base + n;
      },
      receiver,
      2,
    );
    expect(sum).toBe(42);
  });

  test('When a function is bound to a context, then it runs in it wherever it is called', () => {
    const bound = context.bind(traced('d'), () => activeValue());
    expect(bound()).toBe('d');
  });

  test('When a context is attached and the token disposed, then the one before is active again', () => {
    requestContext.run({ requestId: 'r-3', trace: traced('before') }, () => {
      const token = context.attach(traced('attached'));
      expect({ id: currentRequestId(), value: activeValue() }).toEqual({
        id: 'r-3',
        value: 'attached',
      });
      token.dispose();
      token.dispose();
      expect({ id: currentRequestId(), value: activeValue() }).toEqual({
        id: 'r-3',
        value: 'before',
      });
    });
  });
});

/** A server whose handler reads the body with `read`, then answers what the request context holds. */
async function serverReading(
  read: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void,
) {
  const server = createServer((req, res) => {
    requestContext.run({ requestId: 'req-body', trace: traced('body') }, () =>
      read(req, res, (err) => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            err: err ? String(err) : null,
            id: currentRequestId(),
            value: activeValue(),
          }),
        );
      }),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

describe('Handlers after a body is read', () => {
  test.each([
    ['our JSON reader', jsonBody()],
    [
      "a reader that is not ours, kept in the request's context",
      keepingRequestContext((req: IncomingMessage, _res: ServerResponse, next) => {
        req.resume();
        req.on('end', () => next());
      }),
    ],
  ])(
    "When a body is read by %s, then what follows runs in the request's context (its id, its trace)",
    async (_what, read) => {
      const server = await serverReading(read);
      try {
        const { port } = server.address() as AddressInfo;
        // A body large enough to arrive in several reads, each in the socket's async context.
        const res = await fetch(`http://127.0.0.1:${port}/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ pad: 'x'.repeat(12_000) }),
        });
        expect(await res.json()).toEqual({ err: null, id: 'req-body', value: 'body' });
      } finally {
        server.close();
      }
    },
  );
});

/** A request in `store` that reads its request id once `release` is called, after it has ended. */
function requestReadingLate(store: { requestId: string; trace: ReturnType<typeof traced> }) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let late!: Promise<string | undefined>;
  requestContext.run(store, () => {
    late = gate.then(() => currentRequestId());
  });
  return { late, release };
}

// The storage stays enabled once a traced request entered it: on Node 24 (AsyncContextFrame) an
// enabled storage costs the promises outside it nothing, and `disable()` no longer takes the
// store from continuations already made (bench/runtime/async-context-cost.mjs, docs/performance.md).
describe('A process that enters the request context only for traced requests (the token service)', () => {
  test('When a traced request has ended, then what it still runs keeps its own context (a late span stays in its trace)', async () => {
    const first = requestReadingLate({ requestId: 't-1', trace: traced('t-1') });
    const second = requestReadingLate({ requestId: 't-2', trace: traced('t-2') });
    second.release();
    first.release();
    expect([await first.late, await second.late]).toEqual(['t-1', 't-2']);
  });
});
