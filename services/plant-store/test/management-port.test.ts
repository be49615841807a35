import { describe, expect, jest, test } from '@jest/globals';
import request from 'supertest';
import { askManagementForPublic, askPublicForManagement } from '@plant/test-kit';
import { usePlantStore } from './helpers/plant-store-harness.js';

jest.setTimeout(20_000);

const plantStore = usePlantStore();

describe('The management port and the public port', () => {
  test('When the public port is asked for /metrics, /healthz or /readyz, however spelled or redirected, then it answers 404 in the Error shape', async () => {
    const store = plantStore();
    const answers = await askPublicForManagement(
      store.url,
      Number(new URL(store.managementUrl).port),
    );

    expect(answers.length).toBeGreaterThan(20);
    expect(answers).toEqual(answers.map(({ what }) => ({ what, status: 404, errorShape: true })));
  });

  test("When the management port is asked, then it serves the probes and the public listener's metrics", async () => {
    const store = plantStore();
    const tenant = store.newTenant();
    await request(store.url)
      .get('/plants')
      .set('authorization', `Bearer ${store.token(tenant)}`)
      .expect(200);

    const health = await request(store.managementUrl).get('/healthz');
    const ready = await request(store.managementUrl).get('/readyz');
    const metrics = await request(store.managementUrl).get('/metrics');

    expect({ health: [health.status, health.body], ready: [ready.status, ready.body] }).toEqual({
      health: [200, { status: 'ok' }],
      ready: [200, { status: 'ready' }],
    });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(
      /^http_requests_total\{method="GET",route="\/plants",status="200",service="plant-store"\} [1-9]/m,
    );
    // The public listener's 404s for /metrics are counted as what they are: unmatched requests.
    expect(metrics.text).not.toMatch(/route="\/(metrics|healthz|readyz)"/);
  });

  test('When the management port is asked for a public route, with or without forwarding and rewrite headers, then it answers 404 in the Error shape', async () => {
    const store = plantStore();
    const answers = await askManagementForPublic(store.managementUrl, [
      '/plants',
      '/plants/',
      '/openapi.json',
      '/',
    ]);

    expect(answers).toEqual(answers.map(({ what }) => ({ what, status: 404, errorShape: true })));
  });

  test('When a probe comes with forwarded headers, then the answer is the same as without', async () => {
    const store = plantStore();
    const forwarded = {
      'x-forwarded-for': '203.0.113.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'api.example.com',
      'x-original-url': '/plants',
    };

    const [plain, withHeaders] = await Promise.all([
      request(store.managementUrl).get('/readyz'),
      request(store.managementUrl).get('/readyz').set(forwarded),
    ]);

    expect([withHeaders.status, withHeaders.body]).toEqual([plain.status, plain.body]);
    expect(withHeaders.body).toEqual({ status: 'ready' });
  });

  test('When a probe is polled, then it writes no access line; anything else asked there does', async () => {
    const store = plantStore();
    await request(store.managementUrl).get('/healthz').set('x-request-id', 'probe-quiet-1');
    await request(store.managementUrl).get('/plants').set('x-request-id', 'probe-loud-1');

    const lines = store.logs
      .filter((line) => line.includes('probe-quiet-1') || line.includes('probe-loud-1'))
      .map((line) => JSON.parse(line) as { reqId: string; res: { status: number } });
    expect(lines.map((line) => [line.reqId, line.res.status])).toEqual([['probe-loud-1', 404]]);
  });
});
