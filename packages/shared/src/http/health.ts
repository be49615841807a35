import type { Request, RequestHandler, Response } from 'express';
import { Gauge, type Registry } from 'prom-client';
import { withTimeout } from '@plant/resource-auth/platform/with-timeout';

/** A named readiness check: resolves when the dependency is usable, rejects otherwise. */
export type ReadinessCheck = () => Promise<unknown> | unknown;

/** A readiness check of something that knows whether it is ready (a revocation map's first snapshot). */
export function readyWhen(probe: { isReady(): boolean }, notReady: string): ReadinessCheck {
  return () => {
    if (!probe.isReady()) throw new Error(notReady);
  };
}

/** `/healthz`: the process is alive (no dependency checks: restarting us would not fix the database). */
export const aliveHandler: RequestHandler = (_req: Request, res: Response) => {
  res.json({ status: 'ok' });
};

/** The names of the checks that fail or take longer than `timeoutMs`. */
async function failingChecks(
  checks: Record<string, ReadinessCheck>,
  timeoutMs: number,
): Promise<string[]> {
  const failing: string[] = [];
  await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await withTimeout(Promise.resolve().then(check), timeoutMs, `readiness check ${name}`);
      } catch {
        failing.push(name);
      }
    }),
  );
  return failing.sort();
}

/**
 * `readiness_check_up{check}` on `/metrics`: 1 when the check passes at scrape time, else 0. The
 * readiness probe only says "not ready"; this says which dependency (database, redis,
 * revocation) and for how long, which is what the "unreachable" alerts are written against.
 * The checks run when scraped (a ping each), never on the request path. Once per registry.
 */
export function registerReadinessMetric(
  registry: Registry,
  checks: Record<string, ReadinessCheck>,
  timeoutMs = 2000,
): void {
  if (registry.getSingleMetric('readiness_check_up') !== undefined) return;
  new Gauge({
    name: 'readiness_check_up',
    help: 'Whether a readiness check (database, redis, revocation) passes when scraped: 1 yes, 0 no',
    labelNames: ['check'],
    registers: [registry],
    async collect() {
      const failing = new Set(await failingChecks(checks, timeoutMs));
      for (const check of Object.keys(checks)) this.set({ check }, failing.has(check) ? 0 : 1);
    },
  });
}

/** `/readyz`: every check passes within `timeoutMs`, else 503 naming the failing ones. */
export function readinessHandler(
  checks: Record<string, ReadinessCheck>,
  timeoutMs = 2000,
): RequestHandler {
  return async function ready(_req: Request, res: Response): Promise<void> {
    const failing = await failingChecks(checks, timeoutMs);
    if (failing.length === 0) res.json({ status: 'ready' });
    else res.status(503).json({ error: 503, message: `Not ready: ${failing.join(', ')}` });
  };
}
