import type { Request, RequestHandler, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { HttpRequestMetrics } from './http-request-metrics.js';
import type { CacheStats } from '@plant/resource-auth/platform/cache-stats';

export type { CacheStats };

/** One registry per service process, with Node's default metrics. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Records one finished request: method, route template ('unmatched' without one), status, seconds. */
export type HttpRequestRecorder = (
  method: string,
  route: string,
  status: number,
  seconds: number,
) => void;

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

/**
 * The size of each memory-bounded cache on `/metrics`, labelled `cache`: `cache_entries`,
 * `cache_bytes` (what the entries are charged), `cache_budget_bytes`, `cache_evictions_total`.
 * Read when scraped; nothing on the request path.
 */
export function registerCacheMetrics(
  registry: Registry,
  caches: Record<string, () => CacheStats>,
): void {
  const registers = [registry];
  const labelNames = ['cache'] as const;
  const gauge = (name: string, help: string, read: (stats: CacheStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      collect() {
        for (const [cache, stats] of Object.entries(caches)) this.set({ cache }, read(stats()));
      },
    });
  gauge('cache_entries', 'Entries held by a memory-bounded cache', (s) => s.entries);
  gauge(
    'cache_bytes',
    'Bytes the entries of a memory-bounded cache are charged (measured estimates per entry)',
    (s) => s.bytes,
  );
  gauge(
    'cache_budget_bytes',
    'The budget of a memory-bounded cache; beyond it the least recently used entries go',
    (s) => s.budgetBytes,
  );
  const counted = new Map<string, number>();
  new Counter({
    name: 'cache_evictions_total',
    help: 'Entries a memory-bounded cache dropped to stay within its budget',
    labelNames,
    registers,
    collect() {
      for (const [cache, stats] of Object.entries(caches)) {
        const { evictions } = stats();
        const delta = evictions - (counted.get(cache) ?? 0);
        counted.set(cache, evictions);
        if (delta > 0) this.inc({ cache }, delta);
        else this.inc({ cache }, 0);
      }
    },
  });
}
