import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  askManagementForPublic,
  askPublicForManagement,
  askRaw,
  eventually,
  spawnService,
  type ServiceProcess,
} from '@plant/test-kit';
import request from 'supertest';
import { TEST_ENV } from './helpers/harness.js';

/** A GET on `agent`: `written` once the whole request is on its socket (true if that socket was reused), `status` once its answer has been read. */
function getOn(agent: Agent, url: string): { written: Promise<boolean>; status: Promise<number> } {
  const req = httpRequest(url, { agent });
  const failed = new Promise<never>((_, reject) => req.once('error', reject));
  const written = new Promise<boolean>((resolve) =>
    req.once('finish', () => resolve(req.reusedSocket)),
  );
  const status = new Promise<number>((resolve) =>
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    }),
  );
  req.end();
  return { written: Promise.race([written, failed]), status: Promise.race([status, failed]) };
}

let svc: ServiceProcess;

beforeAll(async () => {
  svc = await spawnService('token-service', {
    env: { ...TEST_ENV, INTERNAL_PORT: '0', LOG_LEVEL: 'info' },
  });
});

afterAll(async () => {
  await svc.stop();
});

describe('the built service as a process', () => {
  test('When it starts, then it logs one listening line with its three ports', () => {
    const listening = svc.logs
      .filter((l) => l.includes('"msg":"listening"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

    expect(listening).toHaveLength(1);
    expect(listening[0]).toMatchObject({
      msg: 'listening',
      port: svc.port,
      internalPort: svc.internalPort,
      managementPort: svc.managementPort,
    });
    expect(new Set([svc.port, svc.internalPort, svc.managementPort]).size).toBe(3);
  });

  test('When probed, then healthz, readyz and metrics answer on the management port', async () => {
    await request(svc.url).get('/realms/no-such-realm/.well-known/openid-configuration');
    const health = await request(svc.managementUrl).get('/healthz');
    const ready = await request(svc.managementUrl).get('/readyz');
    const metrics = await request(svc.managementUrl).get('/metrics');

    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('http_requests_total');
  });

  test('When the public port is asked for /metrics, /healthz or /readyz, however spelled or redirected, then it answers 404 in the Error shape', async () => {
    const answers = await askPublicForManagement(svc.url, svc.managementPort);

    expect(answers.length).toBeGreaterThan(20);
    expect(answers).toEqual(answers.map(({ what }) => ({ what, status: 404, errorShape: true })));
  });

  test('When the internal port is asked for them, then without a credential it is 401, and with one 404, like any path', async () => {
    const asked = async (authorization: Record<string, string>) => {
      const answers = [];
      for (const path of ['/healthz', '/readyz', '/metrics'])
        answers.push(await askRaw(svc.internalUrl!, 'GET', path, authorization));
      return answers.map(({ status, errorShape }) => ({ status, errorShape }));
    };

    expect(await asked({})).toEqual(Array(3).fill({ status: 401, errorShape: true }));
    expect(await asked({ authorization: `Bearer ${TEST_ENV.ACCOUNT_ADMIN_TOKEN}` })).toEqual(
      Array(3).fill({ status: 404, errorShape: true }),
    );
  });

  test('When a resource server polls the revocation change feed, then its answers write no access line; a refused poll still does', async () => {
    const feed = `${svc.internalUrl!}/internal/v1/revocations/changes?after=0`;
    await request(feed)
      .get('')
      .set('authorization', `Bearer ${TEST_ENV.RESOURCE_SERVER_TOKENS.split(',')[0]}`)
      .set('x-request-id', 'feed-poll-ok')
      .expect(200);
    await request(feed).get('').set('x-request-id', 'feed-poll-refused').expect(401);
    // The lines come in the order the answers finished: once the refused poll's is here, the
    // answered poll's would be too.
    await eventually(
      () => svc.logs.some((line) => line.includes('feed-poll-refused')),
      'the refused poll is logged',
    );

    const lines = svc.logs
      .filter((line) => line.includes('feed-poll-'))
      .map((line) => JSON.parse(line) as { reqId: string; res: { status: number } });
    expect(lines.map((line) => [line.reqId, line.res.status])).toEqual([
      ['feed-poll-refused', 401],
    ]);
  });

  test('When the management port is asked for a public or internal route, with or without forwarding and rewrite headers, then it answers 404 in the Error shape', async () => {
    const answers = await askManagementForPublic(svc.managementUrl, [
      '/realms/master/protocol/openid-connect/token',
      '/realms/master/.well-known/openid-configuration',
      '/internal/v1/revocations',
      '/internal/v1/realms/master/jwks',
      '/',
    ]);

    expect(answers).toEqual(answers.map(({ what }) => ({ what, status: 404, errorShape: true })));
  });

  test('When the internal API is called on the public port, then it is not there', async () => {
    const res = await request(svc.url)
      .get('/internal/v1/revocations')
      .set('authorization', `Bearer ${TEST_ENV.ACCOUNT_ADMIN_TOKEN}`);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 404, message: 'No route for GET /internal/v1/revocations' });
  });

  test('When a configuration value is missing, then it stops with one line naming the variable', async () => {
    const { ACCOUNT_ADMIN_TOKEN: _omitted, ...env } = TEST_ENV;

    await expect(
      spawnService('token-service', { env: { ...env, INTERNAL_PORT: '0' }, timeoutMs: 10_000 }),
    ).rejects.toThrow('configuration error: ACCOUNT_ADMIN_TOKEN is required but not set');
  });

  test('When it gets SIGTERM, then it drains and exits 0', async () => {
    const other = await spawnService('token-service', { env: { ...TEST_ENV, INTERNAL_PORT: '0' } });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // In flight for certain, not after a guessed delay: a connection the service has accepted
      // (its first answer came back on it), and the next request written whole on it before the
      // signal. A request still in the listen queue when the listener closes is reset instead.
      const first = getOn(agent, `${other.managementUrl}/readyz`);
      expect(await first.status).toBe(200);
      const inFlight = getOn(agent, `${other.managementUrl}/readyz`);
      const reused = await inFlight.written;

      const code = await other.stop('SIGTERM');

      expect(reused).toBe(true);
      expect(code).toBe(0);
      expect(await inFlight.status).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});
