import type { Request, RequestHandler, Response } from 'express';
import { withTimeout } from './with-timeout.js';

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

/** `/readyz`: every check passes within `timeoutMs`, else 503 naming the failing ones. */
export function readinessHandler(
  checks: Record<string, ReadinessCheck>,
  timeoutMs = 2000,
): RequestHandler {
  return async function ready(_req: Request, res: Response): Promise<void> {
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
  };
}
