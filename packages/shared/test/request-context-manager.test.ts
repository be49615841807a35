import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jsonBody, keepingRequestContext } from '../src/json-body.js';
import {
  currentRequestId,
  keepRequestContextForEveryRequest,
  requestContext,
  runTracedRequest,
  tracedRequestEnded,
} from '../src/request-context.js';
import { RequestContextManager } from '../src/request-context-manager.js';

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

/** A traced request that reads its request id once `release` is called, after it has ended. */
function tracedRequestReadingLate(id: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let late!: Promise<string | undefined>;
  runTracedRequest({ requestId: id, trace: traced(id) }, () => {
    late = gate.then(() => currentRequestId());
  });
  return { late, release };
}

// Last in this file: keeping the context for every request cannot be undone in a process.
describe('A process that keeps the request context only for traced requests (the token service)', () => {
  test('When its last traced request ends, then the storage is off (nothing pays for it) until the next traced request', async () => {
    const first = tracedRequestReadingLate('t-1');
    tracedRequestEnded();
    first.release();
    expect(await first.late).toBeUndefined();

    const second = tracedRequestReadingLate('t-2');
    const third = tracedRequestReadingLate('t-3');
    tracedRequestEnded();
    second.release();
    // One traced request is still in flight: the storage stays on for it.
    expect(await second.late).toBe('t-2');
    tracedRequestEnded();
    third.release();
    expect(await third.late).toBeUndefined();
  });

  test('When an app of the process keeps the context for every request, then ending traced requests leaves it on', async () => {
    keepRequestContextForEveryRequest();
    const request = tracedRequestReadingLate('t-4');
    tracedRequestEnded();
    request.release();
    expect(await request.late).toBe('t-4');
  });
});
