import type { Request, RequestHandler, Response } from 'express';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { HttpRequestMetrics } from './http-request-metrics.js';

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
 * values would grow memory with every distinct URL) and status, in `registry`.
 */
export function httpRequestRecorder(registry: Registry): HttpRequestRecorder {
  const metrics = new HttpRequestMetrics();
  metrics.register(registry);
  return (method, route, status, seconds) => metrics.record(method, route, status, seconds);
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
