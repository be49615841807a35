import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startHarness, type Harness } from './helpers/harness.js';
import { AUTH } from './helpers/internal-client.js';

let h: Harness;

beforeAll(async () => {
  // Nothing listens on port 9 of the loopback: every query fails to connect.
  h = await startHarness({ DATABASE_URL: 'postgres://postgres@127.0.0.1:9/plantstore_test' });
});

afterAll(async () => {
  await h.close();
});

describe('Postgres unreachable', () => {
  test('When a token is requested, then 503 with Retry-After, never 500', async () => {
    const res = await request(h.publicUrl)
      .post('/realms/any-tenant/protocol/openid-connect/token')
      .type('form')
      .send({ grant_type: 'client_credentials' });

    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toEqual({ error: 503, message: 'Service temporarily unavailable' });
  });

  test('When the internal API is called, then 503, and the warning names the request id (this process has no request context)', async () => {
    const res = await request(h.internalUrl)
      .get('/internal/v1/revocations')
      .set('authorization', AUTH)
      .set('x-request-id', 'outage-probe-1');

    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 503, message: 'Service temporarily unavailable' });
    const warnings = h.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'dependency unavailable' && l.reqId === 'outage-probe-1');
    expect(warnings).toHaveLength(1);
  });

  test('When readiness is probed, then it names the database', async () => {
    const res = await request(h.managementUrl).get('/readyz');

    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 503, message: 'Not ready: database' });
  });
});
