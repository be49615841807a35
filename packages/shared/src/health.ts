import { Router, type Request, type Response } from 'express';
import { withTimeout } from './with-timeout.js';

/** A named readiness check: resolves when the dependency is usable, rejects otherwise. */
export type ReadinessCheck = () => Promise<unknown> | unknown;

/**
 * `/healthz`: the process is alive (no dependency checks: restarting us would not fix
 * the database). `/readyz`: every check passes, else 503 naming the failing ones.
 */
export function healthRoutes(checks: Record<string, ReadinessCheck>, timeoutMs = 2000): Router {
  const router = Router();
  router.get('/healthz', (_req: Request, res: Response) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req: Request, res: Response) => {
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
    if (failing.length === 0) res.json({ status: 'ready' });
    else res.status(503).json({ error: 503, message: `Not ready: ${failing.sort().join(', ')}` });
  });
  return router;
}
