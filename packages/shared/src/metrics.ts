import type { Request, RequestHandler, Response } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** One registry per service process, with Node's default metrics. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Records one finished request: method, route template ('unmatched' without one), status, seconds. */
export type HttpRequestRecorder = (method: string, route: string, status: number, seconds: number) => void;

/**
 * Request count and latency by route template (never the raw path: unbounded label
 * values would grow memory with every distinct URL) and status. The labelled children are
 * looked up once per (method, route, status) and kept: all three are bounded (the HTTP parser
 * only accepts known methods), and it spares prom-client hashing a label object per request.
 */
export function httpRequestRecorder(registry: Registry): HttpRequestRecorder {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  return function recordRequest(method, route, status, seconds) {
    const key = `${method} ${status} ${route}`;
    let child = children.get(key);
    if (child === undefined) {
      const labels = [method, route, String(status)] as const;
      child = { count: requests.labels(...labels), time: duration.labels(...labels) };
      children.set(key, child);
    }
    child.count.inc();
    child.time.observe(seconds);
  };
}

/** The route template express matched (`${baseUrl}${route.path}`), or 'unmatched'. */
export function routeOf(req: Request): string {
  const routePath = (req.route as { path?: unknown } | undefined)?.path;
  return typeof routePath === 'string' ? `${req.baseUrl}${routePath}` : 'unmatched';
}

export function metricsHandler(registry: Registry): RequestHandler {
  return async function serveMetrics(_req: Request, res: Response): Promise<void> {
    res.setHeader('content-type', registry.contentType);
    res.end(await registry.metrics());
  };
}
