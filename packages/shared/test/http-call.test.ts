import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpCall } from '../src/http/index.js';
import { TimeoutError } from '../src/util/index.js';

/** A real server: /echo answers what it was sent, /big a body of 2,000 bytes, /slow never ends its body, /hang never answers. */
let server: http.Server;
let base: string;
/** When the server saw each /stall-404 connection closed. */
const stalledClosed: number[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/echo') {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () =>
        res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null }),
          ),
      );
      return;
    }
    if (req.url === '/big') return void res.end('x'.repeat(2000));
    if (req.url === '/slow') return void res.writeHead(200).write('partial');
    if (req.url === '/hang') return;
    if (req.url === '/stall-404') {
      req.socket.once('close', () => stalledClosed.push(Date.now()));
      return void res.writeHead(404, { 'content-length': '100' }).write('{"message":');
    }
    res.writeHead(404).end('{"message":"nothing here"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('httpCall', () => {
  test('When a request with a body is answered, then the status, the body and its bytes come back', async () => {
    const answer = await httpCall(`${base}/echo`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: '{"a":"é"}',
      timeoutMs: 2000,
    });
    const { text, bytes } = await answer.text();

    expect(answer.status).toBe(201);
    expect(JSON.parse(text)).toEqual({ method: 'POST', body: '{"a":"é"}', auth: 'Bearer t' });
    expect(bytes).toBe(Buffer.byteLength(text));
  });

  test('When the body is discarded, then the connection serves the next call', async () => {
    (await httpCall(`${base}/missing`, { timeoutMs: 2000 })).discard();
    const next = await httpCall(`${base}/big`, { timeoutMs: 2000 });

    expect((await next.text()).bytes).toBe(2000);
  });

  test('When a discarded body stalls part-way, then the deadline still cuts the connection', async () => {
    const answer = await httpCall(`${base}/stall-404`, { timeoutMs: 200 });
    answer.discard();

    // Without the deadline only the server's own timeouts (minutes) would ever free this socket.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(stalledClosed).toHaveLength(1);
  });

  test('When the body is larger than allowed, then reading it rejects', async () => {
    const answer = await httpCall(`${base}/big`, { timeoutMs: 2000 });

    await expect(answer.text(1000)).rejects.toMatchObject({ name: 'BodyTooLarge' });
  });

  test('When no answer comes in time, then the call rejects with a TimeoutError; a body cut short by the timeout rejects its read', async () => {
    await expect(httpCall(`${base}/hang`, { timeoutMs: 100 })).rejects.toBeInstanceOf(TimeoutError);
    const slow = await httpCall(`${base}/slow`, { timeoutMs: 100 });
    await expect(slow.text()).rejects.toBeInstanceOf(TimeoutError);
  });

  test('When the signal aborts, then the call rejects with an AbortError', async () => {
    const controller = new AbortController();
    const pending = httpCall(`${base}/hang`, { timeoutMs: 5000, signal: controller.signal });
    controller.abort();

    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  test('When nothing listens, then the call rejects', async () => {
    await expect(httpCall('http://127.0.0.1:1/', { timeoutMs: 2000 })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });
});
