import { requestIdOf } from '@plant/shared/logging';
import type { Request, Response } from 'express';
import type { Actor, RequestMeta } from './actor.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Who is asking, set by `authenticateApi`. */
      actor?: Actor;
      /** The handle of the portal session asking (unset for a bearer caller). */
      sessionHandle?: string;
    }
  }
}

export function requestMeta(req: Request): RequestMeta {
  return { requestId: requestIdOf(req) ?? null, address: req.ip ?? null };
}

export function clientIdOf(req: Request): string {
  return String(req.params.client_id);
}

/** Answers that may carry a secret, and management answers, are never cached. */
export function noStore(res: Response): Response {
  return res.setHeader('cache-control', 'no-store');
}

export function actorOf(req: Request): Actor {
  if (req.actor === undefined) throw new Error('actorOf called on a route without authentication');
  return req.actor;
}
