import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { spawnService, startTestIssuer, TEST_DATABASE_URL, uniqueName, type TestIssuer } from '@plant/test-kit';

// The built service as production runs it (dist/start.js), against the test issuer's JWKS.
let issuer: TestIssuer;
let env: Record<string, string>;

beforeAll(async () => {
  issuer = await startTestIssuer({ authUrl: 'http://auth.test:8082', audience: 'http://plant-store.test:8081' });
  env = {
    DATABASE_URL: TEST_DATABASE_URL,
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
  test('When started, then it logs listening once, serves plants, and on SIGTERM finishes an in-flight request and exits 0', async () => {
    const svc = await spawnService('plant-store', { env });
    const tenant = uniqueName('t');
    issuer.addRealm(tenant);
    const token = issuer.mint({ tenant });
    try {
      expect(svc.logs.filter((l) => l.includes('"msg":"listening"'))).toHaveLength(1);
      const created = await request(svc.url).post('/plants').set('authorization', `Bearer ${token}`).send({ id: 1, name: 'Basil' });
      expect({ status: created.status, body: created.body }).toEqual({ status: 200, body: { name: 'Basil' } });

      // Start a request whose body is still arriving, then SIGTERM: it must complete.
      let exited: Promise<number | null> | undefined;
      const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${svc.url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': '23' },
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
