import { requestIdOf } from '@plant/shared/logging';
import type { Request, Response } from 'express';
import type { RequestMeta } from './actor.js';

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
