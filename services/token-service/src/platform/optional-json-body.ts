import type { NextFunction, Request, Response } from 'express';
import { jsonBody } from '@plant/shared/http';

const readJson = jsonBody();

/** For routes whose body is optional (`{actor}`): no body at all reads as `{}`; anything sent must be JSON. */
export function optionalJsonBody(req: Request, res: Response, next: NextFunction): void {
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (
    !chunked &&
    (length === undefined || length === '0') &&
    req.headers['content-type'] === undefined
  ) {
    req.body = {};
    next();
    return;
  }
  readJson(req, res, next);
}
