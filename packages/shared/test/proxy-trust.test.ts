import { request } from 'node:http';
import { afterAll, describe, expect, test } from '@jest/globals';
import type { Request } from 'express';
import {
  createHttpApp,
  parseTrustProxy,
  sendJson,
  startWebServer,
  type NodeHandler,
  type TrustProxy,
  type WebServer,
} from '../src/http/index.js';
import { createLogger } from '../src/logging/index.js';

const logger = createLogger({ name: 'proxy-trust-test', level: 'silent' });
const servers: WebServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close(100)));
});

/** What each way of dispatch makes of the client: express's req.ip/protocol on one route, the raw headers on a hot one. */
async function serve(trustProxy: TrustProxy): Promise<WebServer> {
  const echoExpress: NodeHandler = (req, res) =>
    sendJson(res, 200, {
      ip: (req as Request).ip,
      protocol: (req as Request).protocol,
      xff: req.headers['x-forwarded-for'] ?? null,
    });
  const echoHot: NodeHandler = (req, res) =>
    sendJson(res, 200, {
      xff: req.headers['x-forwarded-for'] ?? null,
      proto: req.headers['x-forwarded-proto'] ?? null,
    });
  const app = createHttpApp({
    logger,
    trustProxy,
    routes: [
      { method: 'GET', path: '/express', handlers: [echoExpress] },
      { method: 'GET', path: '/hot', hot: true, handlers: [echoHot] },
    ],
  });
  const server = await startWebServer(app, { port: 0, host: '127.0.0.1' });
  servers.push(server);
  return server;
}

function get(
  server: WebServer,
  path: string,
  headers: Record<string, string>,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve(JSON.parse(text) as Record<string, unknown>));
    });
    req.on('error', reject);
    req.end();
  });
}

const spoofed = {
  'x-forwarded-for': '203.0.113.9',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'evil.example',
};

describe('TRUST_PROXY', () => {
  test.each([
    ['0', 0],
    ['1', 1],
    ['10.0.0.0/8', ['10.0.0.0/8']],
    ['10.0.0.0/8, 192.168.1.7 ,loopback', ['10.0.0.0/8', '192.168.1.7', 'loopback']],
    ['fd00::/8', ['fd00::/8']],
  ])('When it is %p, then it reads as %p', (raw, parsed) => {
    expect(parseTrustProxy(raw)).toEqual(parsed);
  });

  test.each(['11', '10.0.0.0/33', 'not-an-address', ',', '1.2.3.4/8/9'])(
    'When it is %p, then it is refused',
    (raw) => {
      expect(() => parseTrustProxy(raw)).toThrow(/hop count/);
    },
  );

  test('When forwarded headers come from an address outside the trusted ranges, then both ways of dispatch ignore them', async () => {
    const server = await serve(['10.0.0.0/8']);

    expect(await get(server, '/express', spoofed)).toEqual({
      ip: '127.0.0.1',
      protocol: 'http',
      xff: null,
    });
    expect(await get(server, '/hot', spoofed)).toEqual({ xff: null, proto: null });
  });

  test('When they come from a trusted proxy, then the client is the last address no trusted hop vouches for', async () => {
    const server = await serve(['127.0.0.1', '10.0.0.0/8']);

    expect(await get(server, '/express', spoofed)).toEqual({
      ip: '203.0.113.9',
      protocol: 'https',
      xff: '203.0.113.9',
    });
    // A client that sends its own X-Forwarded-For through the proxy cannot choose its address.
    expect(
      await get(server, '/express', { 'x-forwarded-for': '198.51.100.1, 203.0.113.9, 10.1.2.3' }),
    ).toMatchObject({ ip: '203.0.113.9', xff: '203.0.113.9' });
    expect(await get(server, '/hot', { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' })).toEqual({
      xff: '203.0.113.9',
      proto: null,
    });
  });

  test('When it is a hop count, then whoever connects is trusted for that many hops (the network must admit the proxy alone)', async () => {
    const server = await serve(1);

    expect(await get(server, '/express', spoofed)).toEqual({
      ip: '203.0.113.9',
      protocol: 'https',
      xff: '203.0.113.9',
    });
  });
});
