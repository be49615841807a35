/**
 * `createResourceAuth`, the drop-in for any Node API, both ways a stranger would use it: express
 * middleware (answering its own errors) and the plain function behind a bare `node:http` server.
 * The test issuer plays the token service's internal API; revocation events go over the shared
 * real Redis channel, for this file's own tenant.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import request from 'supertest';
import {
  dpopKey,
  eventually,
  startTestIssuer,
  TEST_REDIS_URL,
  uniqueName,
  type TestIssuer,
} from '@plant/test-kit';
import {
  createResourceAuth,
  principalOf,
  REVOCATION_CHANNEL,
  type ResourceAuth,
} from '../src/index.js';

const AUTH_URL = 'http://auth.test';
const AUDIENCE = 'http://orders.test';
const PUBLIC_URL = 'https://orders.example.test';

let issuer: TestIssuer;
let auth: ResourceAuth;
let plain: Server;
let plainUrl: string;
let app: express.Express;
let publisher: Redis;
const tenant = uniqueName('drop');

beforeAll(async () => {
  issuer = await startTestIssuer({ authUrl: AUTH_URL, audience: AUDIENCE });
  issuer.addRealm(tenant);
  publisher = new Redis(TEST_REDIS_URL);
  auth = createResourceAuth({
    authUrl: AUTH_URL,
    internalUrl: issuer.url,
    credential: 'orders-internal-token',
    redisUrl: TEST_REDIS_URL,
    audience: AUDIENCE,
    publicUrl: PUBLIC_URL,
    realm: 'orders',
  });
  await auth.start();
  // The plain function, as a bare node:http server would use it.
  plain = createServer((req, res) => {
    auth.authenticate(req, res).then(
      (caller) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ sub: caller.sub }));
      },
      (err: unknown) => auth.sendError(req, res, err),
    );
  });
  plain.listen(0, '127.0.0.1');
  await new Promise((resolve) => plain.once('listening', resolve));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  app = express();
  app.get('/orders', auth.middleware, (req, res) => {
    res.json({ sub: principalOf(req).sub });
  });
  app.post('/orders', auth.middleware, auth.requireRole('Edit'), (_req, res) => {
    res.status(201).json({ ok: true });
  });
});

afterAll(async () => {
  await new Promise((resolve) => plain?.close(resolve));
  await auth?.stop();
  publisher?.disconnect();
  await issuer?.close();
});

const mint = (claims: Record<string, unknown> = {}) =>
  issuer.mint({ tenant, claims: { sub: uniqueName('sa'), ...claims } });

describe('createResourceAuth', () => {
  test('When the revocation snapshot has loaded, then isReady is true (for a readiness probe)', () => {
    expect(auth.isReady()).toBe(true);
  });

  test('When a valid token is sent, then the express middleware and the plain function both name the caller', async () => {
    const token = mint({ sub: 'caller-1' });
    expect(
      (await request(app).get('/orders').set('authorization', `Bearer ${token}`)).body,
    ).toEqual({ sub: 'caller-1' });
    expect(
      (await request(plainUrl).get('/orders').set('authorization', `Bearer ${token}`)).body,
    ).toEqual({ sub: 'caller-1' });
  });

  test("When there is no token, then both answer 401 in the Error shape with the API's own challenge, without any error middleware", async () => {
    for (const target of [app, plainUrl]) {
      const res = await request(target).get('/orders');
      expect({
        status: res.status,
        challenge: res.headers['www-authenticate'],
        body: res.body,
      }).toEqual({
        status: 401,
        challenge: 'Bearer realm="orders"',
        body: {
          error: 401,
          message: 'Authentication required: send Authorization: Bearer <access token>',
        },
      });
    }
  });

  test('When a View token calls a route that needs Edit, then 403 insufficient_scope in the Error shape', async () => {
    const res = await request(app)
      .post('/orders')
      .set('authorization', `Bearer ${mint({ role: 'View' })}`);
    expect({
      status: res.status,
      challenge: res.headers['www-authenticate'],
      body: res.body.error,
    }).toEqual({
      status: 403,
      challenge: expect.stringContaining('error="insufficient_scope"'),
      body: 403,
    });
  });

  test("When an Edit token's scope is narrowed to plants:read, then a route that needs Edit answers 403 insufficient_scope naming the scope", async () => {
    const message = "This operation needs the plants:write scope; the token's scope is narrower";
    const res = await request(app)
      .post('/orders')
      .set('authorization', `Bearer ${mint({ role: 'Edit', scope: 'plants:read' })}`);
    expect({
      status: res.status,
      challenge: res.headers['www-authenticate'],
      body: res.body,
    }).toEqual({
      status: 403,
      challenge: `Bearer realm="orders", error="insufficient_scope", error_description="${message}"`,
      body: { error: 403, message },
    });
    const full = await request(app)
      .post('/orders')
      .set('authorization', `Bearer ${mint({ role: 'Edit', scope: 'plants:read plants:write' })}`);
    expect(full.status).toBe(201);
  });

  test("When the token service publishes a revocation of the caller, then both refuse its older token at once ('Token has been revoked')", async () => {
    const sub = uniqueName('revoked');
    const token = mint({ sub, ver: 1 });
    expect(
      (await request(plainUrl).get('/orders').set('authorization', `Bearer ${token}`)).status,
    ).toBe(200);
    issuer.revoke(tenant, sub, { version: 2 });
    await publisher.publish(
      REVOCATION_CHANNEL,
      JSON.stringify({ tenant, sub, version: 2, deleted: false }),
    );
    await eventually(
      async () =>
        (await request(plainUrl).get('/orders').set('authorization', `Bearer ${token}`)).status ===
        401,
      'the plain function refuses the token',
      2_000,
    );
    const res = await request(app).get('/orders').set('authorization', `Bearer ${token}`);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 401,
      body: { error: 401, message: 'Token has been revoked' },
    });
  });

  test('When a DPoP-bound token comes with a proof for the public URL, then both accept it once; as Bearer it is refused', async () => {
    const key = dpopKey();
    const token = mint({ cnf: { jkt: key.thumbprint } });
    const proof = () => key.proof({ htm: 'GET', htu: `${PUBLIC_URL}/orders`, token });
    expect(
      (await request(app).get('/orders').set('authorization', `DPoP ${token}`).set('dpop', proof()))
        .status,
    ).toBe(200);
    const once = proof();
    expect(
      (
        await request(plainUrl)
          .get('/orders')
          .set('authorization', `DPoP ${token}`)
          .set('dpop', once)
      ).status,
    ).toBe(200);
    expect(
      (
        await request(plainUrl)
          .get('/orders')
          .set('authorization', `DPoP ${token}`)
          .set('dpop', once)
      ).status,
    ).toBe(401);
    expect(
      (await request(app).get('/orders').set('authorization', `Bearer ${token}`)).headers[
        'www-authenticate'
      ],
    ).toMatch(/^DPoP realm="orders", error="invalid_token"/);
  });
});
