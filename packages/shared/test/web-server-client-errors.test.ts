import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startWebServer, type WebServer } from '../src/http/web-server.js';

let server: WebServer;
/** Each clientError the server handled, with the socket's state after the handler ran. */
const handled: Array<{ code: string | undefined; destroyed: boolean }> = [];
let onHandled: (() => void) | undefined;

beforeAll(async () => {
  server = await startWebServer((_req, res) => res.end('ok'), { port: 0, host: '127.0.0.1' });
  // Registered after the server's own handler, so it sees what that handler left.
  server.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    handled.push({ code: err.code, destroyed: socket.destroyed });
    onHandled?.();
  });
});

afterAll(async () => {
  await server.close(100);
});

const nextClientError = () =>
  new Promise<void>((resolve) => {
    onHandled = resolve;
  });

describe('requests the HTTP parser refuses', () => {
  test('When a client keeps sending the rest of a request whose headers overflow, then it reads the 431 and the socket lingers instead of resetting', async () => {
    handled.length = 0;
    const client = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
    const errors: string[] = [];
    client.on('error', (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message));
    let answer = '';
    client.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });

    const first = nextClientError();
    client.write(`DELETE /audit-events?limit=${'a'.repeat(20_000)}`);
    await first;
    await once(client, 'end');
    // The rest of the refused request, as a client that does not read while it writes sends it.
    const second = nextClientError();
    client.write('a'.repeat(5_000));
    await second;
    // Destroying the socket here is what turned the client's further bytes into a reset.
    expect(handled[1]).toEqual({ code: 'HPE_HEADER_OVERFLOW', destroyed: false });
    const third = nextClientError();
    client.write(' HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789');
    await third;
    client.end();
    const [hadError] = (await once(client, 'close')) as [boolean];

    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(handled.map((h) => h.code)).toEqual([
      'HPE_HEADER_OVERFLOW',
      'HPE_HEADER_OVERFLOW',
      'HPE_HEADER_OVERFLOW',
    ]);
    expect(handled.map((h) => h.destroyed)).toEqual([false, false, false]);
    expect({ hadError, errors }).toEqual({ hadError: false, errors: [] });
  });
});
