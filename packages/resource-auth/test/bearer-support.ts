/**
 * What the bearer tests share: the stand-in issuer (`issuer`, started by `useTestIssuer`), a
 * minimal resource server around `createBearerAuth`, and the shapes of its answers.
 */
import { afterAll, beforeAll, jest } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { errorMiddleware, startWebServer, type WebServer } from '@plant/shared/http';
import { createLogger } from '@plant/shared/logging';
import {
  startTestIssuer,
  uniqueName,
  type IssuerAlgorithm,
  type TestIssuer,
} from '@plant/test-kit';
import {
  createBearerAuth,
  principalOf,
  type BearerAuth,
  type BearerAuthOptions,
} from '../src/index.js';

export const AUTH_URL = 'http://auth.test:8082';
export const AUDIENCE = 'http://plant-store.test:8081';

/** The file's stand-in token service (set before its tests run). */
export let issuer: TestIssuer;
const opened: Array<{ web: WebServer; auth: BearerAuth }> = [];

/**
 * Starts the issuer before the file's tests; closes it and every resource server after them.
 * Call it at the top of the file: it also sets the file's test timeout.
 */
export function useTestIssuer(): void {
  // An RSA key generated per realm, on a machine shared with other suites: generous.
  jest.setTimeout(20_000);
  beforeAll(async () => {
    issuer = await startTestIssuer({ authUrl: AUTH_URL, audience: AUDIENCE });
  });
  afterAll(async () => {
    for (const { web, auth } of opened.splice(0)) {
      await web.close(500);
      auth.close();
    }
    await issuer.close();
  });
}

export interface Harness {
  url: string;
  auth: BearerAuth;
  logs: string[];
}

/** A minimal resource server: GET /whoami answers the principal, GET /edit needs Edit. */
export async function resourceServer(overrides: Partial<BearerAuthOptions> = {}): Promise<Harness> {
  const logs: string[] = [];
  const logger = createLogger({
    name: 'bearer-test',
    level: 'debug',
    destination: { write: (line: string) => void logs.push(line) },
  });
  const auth = createBearerAuth({
    authUrl: AUTH_URL,
    audience: AUDIENCE,
    jwksBaseUrl: issuer.url,
    internalToken: 'test-internal-token',
    realm: 'plants',
    logger,
    ...overrides,
  });
  const app = express();
  app.get('/whoami', auth.middleware, (req, res) => {
    res.json(principalOf(req));
  });
  app.get('/edit', auth.middleware, auth.requireRole('Edit'), (_req, res) => {
    res.json({ ok: true });
  });
  app.use(errorMiddleware(logger));
  const web = await startWebServer(app, { port: 0, host: '127.0.0.1' });
  opened.push({ web, auth });
  return { url: web.url, auth, logs };
}

export const whoami = (h: Harness, token: string) =>
  request(h.url).get('/whoami').set('authorization', `Bearer ${token}`);

/** A realm of the issuer with one key for `alg` (default RS256). */
export function newRealm(alg?: IssuerAlgorithm): string {
  const tenant = uniqueName('r');
  issuer.addRealm(tenant, alg);
  return tenant;
}

export const invalidToken = (description: string) => ({
  status: 401,
  challenge: `Bearer realm="plants", error="invalid_token", error_description="${description}"`,
  body: { error: 401, message: description },
});

export const outcome = (res: request.Response) => ({
  status: res.status,
  challenge: res.headers['www-authenticate'],
  body: res.body,
});
