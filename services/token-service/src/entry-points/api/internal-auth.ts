import type { NextFunction, Request, Response } from 'express';
import { Unauthorized } from '@plant/shared';
import { constantTimeEquals } from '@plant/shared';

/** `Authorization: Bearer <INTERNAL_API_TOKEN>`, compared in constant time. */
export function requireInternalToken(expected: string) {
  return function assertInternalToken(req: Request, _res: Response, next: NextFunction): void {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer ([^\s]+)$/i.exec(header);
    if (!match || !constantTimeEquals(match[1]!, expected)) {
      next(new Unauthorized('A valid internal API token is required', { headers: { 'www-authenticate': 'Bearer realm="token-service-internal"' } }));
      return;
    }
    next();
  };
}
