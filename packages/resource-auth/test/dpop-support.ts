/**
 * What the DPoP tests share: resource servers (express, createBearerAuth with DPoP on the test
 * file's own Redis) in front of the test issuer, tokens bound to a test key, and requests with proofs.
 */
import { once } from 'node:events';
import { afterAll, beforeAll } from '@jest/globals';
import { Redis } from 'ioredis';
import express from 'express';
import request from 'supertest';
import { AppError } from '@plant/shared/api';
import { errorMiddleware, sendJson, startWebServer, type WebServer } from '@plant/shared/http';
import { createLogger } from '@plant/shared/logging';
import {
  dpopKey,
  startTestIssuer,
  TEST_REDIS_URL,
  uniqueName,
  type DpopKey,
  type TestIssuer,
} from '@plant/test-kit';
import {
  createBearerAuth,
  createRedisReplayStore,
  principalOf,
  type BearerAuth,
  type DpopOptions,
  type DpopReplayStore,
} from '../src/index.js';

export const AUTH_URL = 'http://auth.test:8082';
export const AUDIENCE = 'http://api.test';
/** What clients call the resource server at: every proof's `htu` starts here, whatever address the test connects to. */
export const PUBLIC_URL = 'https://api.example.test';
export const WHOAMI = `${PUBLIC_URL}/v1/whoami`;
export const READ = `${PUBLIC_URL}/v1/read`;

export interface DpopServer {
  url: string;
  auth: BearerAuth;
  replay: DpopReplayStore;
  /** How many times the read route (`/v1/read`, `readHandler`) ran its read. */
  reads: () => number;
}

export interface DpopWorld {
  issuer: TestIssuer;
  tenant: string;
  /** A resource server on the shared Redis with a key prefix of this file's own. */
  server(options?: Partial<DpopOptions> & { redis?: string }): Promise<DpopServer>;
  /** A token bound to `key` (claims merged over the defaults). */
  boundToken(key: DpopKey, claims?: Record<string, unknown>): string;
}

/** Starts the issuer before the file's tests and closes what it opened after them. */
export function useDpopWorld(): DpopWorld {
  const opened: Array<{ web: WebServer; auth: BearerAuth; replay: DpopReplayStore }> = [];
  const clients: Redis[] = [];
  const prefix = `${uniqueName('dpop')}:`;
  const world = { tenant: uniqueName('r') } as DpopWorld;
  beforeAll(async () => {
    world.issuer = await startTestIssuer({ authUrl: AUTH_URL, audience: AUDIENCE });
    world.issuer.addRealm(world.tenant);
  });
  afterAll(async () => {
    for (const { web, auth, replay } of opened) {
      await web.close(500);
      auth.close();
      await replay.close();
    }
    for (const client of clients) client.disconnect();
    await world.issuer?.close();
  });
  world.server = async ({ redis = TEST_REDIS_URL, ...dpop } = {}) => {
    const logger = createLogger({ name: 'dpop-test', level: 'silent' });
    // On the file's Redis the store gets a connection that is ready before the first request, as
    // a service is before its readiness probe passes: a claim's deadline is not spent on
    // connecting, which a loaded machine can stretch past it.
    let connection: Redis | undefined;
    if (dpop.replay === undefined && redis === TEST_REDIS_URL) {
      connection = new Redis(redis, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
      clients.push(connection);
      await once(connection, 'ready');
    }
    const replay =
      dpop.replay ?? createRedisReplayStore({ redis: connection ?? redis, keyPrefix: prefix });
    const auth = createBearerAuth({
      authUrl: AUTH_URL,
      audience: AUDIENCE,
      jwksBaseUrl: world.issuer.url,
      internalToken: 'test-internal-token',
      realm: 'api',
      logger,
      dpop: { publicUrl: PUBLIC_URL, ...dpop, replay },
    });
    const app = express();
    app.all('/v1/whoami', auth.middleware, (req, res) => {
      res.json(principalOf(req));
    });
    let reads = 0;
    // A read (any method, to show that only GET and HEAD overlap): `x-fail-read` makes it fail.
    app.all(
      '/v1/read',
      auth.readHandler(
        async (req, principal) => {
          reads += 1;
          if (req.headers['x-fail-read'] !== undefined) throw new AppError(409, 'The read failed');
          return { sub: principal.sub, jkt: principal.jkt };
        },
        (res, body) => sendJson(res, 200, body),
      ),
    );
    app.use(errorMiddleware(logger));
    const web = await startWebServer(app, { port: 0, host: '127.0.0.1' });
    opened.push({ web, auth, replay });
    return { url: web.url, auth, replay, reads: () => reads };
  };
  world.boundToken = (key, claims = {}) =>
    world.issuer.mint({
      tenant: world.tenant,
      claims: { cnf: { jkt: key.thumbprint }, ...claims },
    });
  return world;
}

/** GET /v1/whoami with `Authorization: <scheme> <token>` and, when given, the proof. */
export function call(
  server: DpopServer,
  token: string,
  proof?: string | string[],
  { scheme = 'DPoP', method = 'get' }: { scheme?: string; method?: 'get' | 'post' } = {},
) {
  const req = request(server.url)[method]('/v1/whoami').set('authorization', `${scheme} ${token}`);
  // An array goes out as one header line per value, as two DPoP headers would.
  if (proof !== undefined) req.set('dpop', proof as string);
  return req;
}

export const outcome = (res: request.Response) => ({
  status: res.status,
  challenge: res.headers['www-authenticate'],
  body: res.body,
});

const ALGS = 'algs="ES256 EdDSA Ed25519"';

/** The 401 of a refused proof (RFC 9449 §7.1), in the Error shape. */
export const invalidProof = (message: string) => ({
  status: 401,
  challenge: `DPoP realm="api", error="invalid_dpop_proof", error_description="${message}", ${ALGS}`,
  body: { error: 401, message },
});

/** The 401 of a token that cannot be used as sent. */
export const invalidDpopToken = (message: string) => ({
  status: 401,
  challenge: `DPoP realm="api", error="invalid_token", error_description="${message}", ${ALGS}`,
  body: { error: 401, message },
});

export { dpopKey, type DpopKey };
