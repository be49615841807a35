import { describe, expect, it } from '@jest/globals';
import { Counter, Histogram, Registry } from 'prom-client';
import { HTTP_DURATION_BUCKETS, HttpRequestMetrics } from '../src/http/http-request-metrics.js';

type Observation = [method: string, route: string, status: number, seconds: number];

const OBSERVATIONS: Observation[] = [
  ['GET', '/plants', 200, 0.0004],
  ['GET', '/plants', 200, 0.001], // on a bucket's bound: counted in that bucket (le is inclusive)
  ['GET', '/plants', 200, 0.0031],
  ['GET', '/plants', 401, 0.0002],
  ['POST', '/plants', 201, 0.07],
  ['POST', '/realms/:tenant/protocol/openid-connect/token', 200, 3.5], // beyond the last bound: +Inf only
  ['GET', 'unmatched', 404, 0.0009],
  ['GET', '/plants', 200, 0.26],
];

/** The same observations through prom-client's own Counter and Histogram, as the service used them before. */
function promClientReference(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames,
    buckets: [...HTTP_DURATION_BUCKETS],
    registers: [registry],
  });
  for (const [method, route, status, seconds] of OBSERVATIONS) {
    const labels = { method, route, status: String(status) };
    requests.inc(labels);
    duration.observe(labels, seconds);
  }
  return registry;
}

function ours(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  const metrics = new HttpRequestMetrics();
  metrics.register(registry);
  for (const observation of OBSERVATIONS) metrics.record(...observation);
  return registry;
}

describe('HttpRequestMetrics', () => {
  it('writes the exposition text prom-client’s own Counter and Histogram write for the same requests', async () => {
    const expected = await promClientReference('plant-store').metrics();
    expect(await ours('plant-store').metrics()).toBe(expected);
    expect(expected).toContain(
      'http_request_duration_seconds_bucket{le="0.001",service="plant-store",method="GET",route="/plants",status="200"} 2',
    );
  });

  it('gives the same JSON as prom-client (getMetricsAsJSON)', async () => {
    expect(await ours('token-service').getMetricsAsJSON()).toEqual(
      await promClientReference('token-service').getMetricsAsJSON(),
    );
  });

  it('starts empty and forgets everything on a registry reset', async () => {
    const registry = new Registry();
    const metrics = new HttpRequestMetrics();
    metrics.register(registry);
    expect(await registry.metrics()).not.toMatch(/^http_requests_total\{/m);
    metrics.record('GET', '/plants', 200, 0.002);
    expect(await registry.metrics()).toMatch(
      /^http_requests_total\{method="GET",route="\/plants",status="200"\} 1$/m,
    );
    registry.resetMetrics();
    expect(await registry.metrics()).not.toMatch(/^http_request_duration_seconds_count\{/m);
  });

  it('refuses a second registration under the same names, as prom-client does', () => {
    const registry = new Registry();
    new HttpRequestMetrics().register(registry);
    expect(() => new HttpRequestMetrics().register(registry)).toThrow(/already been registered/);
  });
});
