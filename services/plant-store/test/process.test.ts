import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import {
  spawnService,
  startTestIssuer,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  uniqueName,
  type TestIssuer,
} from '@plant/test-kit';

// RSA key generation per realm and real Postgres round trips: generous under a loaded machine.
jest.setTimeout(20_000);

// The built service as production runs it (dist/start.js), against the test issuer's JWKS
// and revocation routes (standing in for the token service's internal API) and real Redis.
let issuer: TestIssuer;
let env: Record<string, string>;

beforeAll(async () => {
  issuer = await startTestIssuer({
    authUrl: 'http://auth.test:8082',
    audience: 'http://plant-store.test:8081',
  });
  env = {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    REVOCATION_RESYNC_MS: '200',
    INTERNAL_API_TOKEN: 'test-internal-token-0123456789',
    AUTH_URL: issuer.authUrl,
    PLANT_STORE_AUDIENCE: issuer.audience,
    TOKEN_SERVICE_INTERNAL_URL: issuer.url,
    PUBLIC_URL: 'http://plants.test:8081',
    HOST: '127.0.0.1',
  };
});

afterAll(async () => {
  await issuer.close();
});

describe('The plant-store process', () => {
  test('When started, then it logs listening once with both ports, serves plants, and on SIGTERM finishes an in-flight request and exits 0', async () => {
    const svc = await spawnService('plant-store', { env });
    const tenant = uniqueName('t');
    issuer.addRealm(tenant);
    const token = issuer.mint({ tenant });
    try {
      const listening = svc.logs
        .filter((l) => l.includes('"msg":"listening"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(listening).toEqual([
        expect.objectContaining({ port: svc.port, managementPort: svc.managementPort }),
      ]);
      expect(svc.managementPort).not.toBe(svc.port);
      const created = await request(svc.url)
        .post('/plants')
        .set('authorization', `Bearer ${token}`)
        .send({ id: 1, name: 'Basil' });
      expect({ status: created.status, body: created.body }).toEqual({
        status: 200,
        body: { name: 'Basil' },
      });

      // Start a request whose body is still arriving, then SIGTERM: it must complete.
      let exited: Promise<number | null> | undefined;
      const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${svc.url}/plants`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': '23',
          },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.write('{"id":2,');
        req.once('socket', (socket) =>
          socket.once('connect', async () => {
            await sleep(300);
            exited = svc.stop('SIGTERM');
            await sleep(300);
            req.end('"name":"Thyme"}');
          }),
        );
      });
      expect(await inFlight).toEqual({ status: 200, body: '{"name":"Thyme"}' });
      expect(await exited).toBe(0);
      expect(svc.logs.some((l) => l.includes('received SIGTERM, draining'))).toBe(true);
      const logs = svc.logs.join('\n');
      expect(logs).not.toContain(token.split('.')[2]);
      expect(logs).not.toContain(env.INTERNAL_API_TOKEN);
    } finally {
      await svc.stop('SIGKILL');
    }
  }, 30_000);

  test('When a principal is revoked at the token service, then the running service refuses its older tokens after a re-sync', async () => {
    const svc = await spawnService('plant-store', { env });
    try {
      const tenant = uniqueName('t');
      issuer.addRealm(tenant);
      const old = issuer.mint({ tenant, claims: { sub: 'sa-revoked', ver: 1 } });
      expect(
        (await request(svc.url).get('/plants').set('authorization', `Bearer ${old}`)).status,
      ).toBe(200);
      expect((await request(svc.managementUrl).get('/readyz')).body).toEqual({ status: 'ready' });

      issuer.revoke(tenant, 'sa-revoked', { version: 2 });
      let res = await request(svc.url).get('/plants').set('authorization', `Bearer ${old}`);
      // The periodic re-sync (200 ms here) picks the change up; bounded wait, no timing assertion.
      for (let i = 0; i < 100 && res.status === 200; i += 1) {
        await sleep(100);
        res = await request(svc.url).get('/plants').set('authorization', `Bearer ${old}`);
      }
      expect({ status: res.status, body: res.body }).toEqual({
        status: 401,
        body: { error: 401, message: 'Token has been revoked' },
      });
      const fresh = issuer.mint({ tenant, claims: { sub: 'sa-revoked', ver: 2 } });
      expect(
        (await request(svc.url).get('/plants').set('authorization', `Bearer ${fresh}`)).status,
      ).toBe(200);
    } finally {
      await svc.stop();
    }
  }, 30_000);

  test('When a required variable is missing, then it exits with one line naming it', async () => {
    const { INTERNAL_API_TOKEN: _omitted, ...withoutSecret } = env;
    await expect(spawnService('plant-store', { env: withoutSecret })).rejects.toThrow(
      /exited with 1 before listening:\nconfiguration error: INTERNAL_API_TOKEN is required but not set$/,
    );
  });

  test('When a variable is invalid, then it exits with one line naming it', async () => {
    await expect(spawnService('plant-store', { env: { ...env, PORT: 'eighty' } })).rejects.toThrow(
      /exited with 1 before listening:\nconfiguration error: PORT is invalid: .*$/,
    );
  });
});
