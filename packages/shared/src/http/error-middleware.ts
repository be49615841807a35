import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import {
  appErrorResponse,
  type ErrorBodyWithStatus,
  sendErrorResponse,
} from '@plant/resource-auth/platform/error-response';
import {
  AppError,
  MethodNotAllowed,
  NotFound,
  STATUS_TEXT,
} from '@plant/resource-auth/platform/errors';
import { ZodError } from 'zod';
import { describeZodError } from '../api/index.js';
import type { Logger } from '../logging/index.js';
import { isDatabaseUnavailable } from '../db/index.js';

export type { ErrorBodyWithStatus };

/** Maps anything thrown to the wire `Error` shape. Pure, so every service maps alike. */
export function toErrorResponse(err: unknown): ErrorBodyWithStatus {
  if (err instanceof AppError) return appErrorResponse(err);
  if (err instanceof ZodError) {
    return {
      status: 400,
      headers: {},
      body: { error: 400, message: describeZodError(err) },
      unexpected: false,
    };
  }
  if (isDatabaseUnavailable(err)) {
    return {
      status: 503,
      headers: { 'retry-after': '1' },
      body: { error: 503, message: STATUS_TEXT[503]! },
      unexpected: false,
    };
  }
  return appErrorResponse(err);
}

/**
 * Answers `err` in the `Error` shape (`sendErrorResponse` of @plant/resource-auth): never a
 * stack to the client, unexpected errors logged once. Needs nothing of express.
 */
export function sendError(
  logger: Logger,
  err: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  sendErrorResponse(logger, toErrorResponse(err), err, req, res);
}

/** The one error handler of an express app (`sendError`). */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return function handleError(
    err: unknown,
    req: Request,
    res: Response,
    _next: NextFunction,
  ): void {
    sendError(logger, err, req, res);
  };
}

/** Last route: anything unmatched is a 404 in the `Error` shape. */
export function notFoundHandler(): RequestHandler {
  return function notFound(req: Request, _res: Response, next: NextFunction): void {
    next(new NotFound(`No route for ${req.method} ${req.path.slice(0, 200)}`));
  };
}

/**
 * A 405 naming `allowed` in `Allow`. A route table adds it to each declared path itself; express
 * routers outside a table mount it with `router.route(path)....all(methodNotAllowed([...]))`.
 */
export function methodNotAllowed(allowed: string[]): RequestHandler {
  const allow = allowed.join(', ');
  return function rejectMethod(req: Request, _res: Response, next: NextFunction): void {
    next(
      new MethodNotAllowed(`Method ${req.method} is not allowed here; allowed: ${allow}`, {
        headers: { allow },
      }),
    );
  };
}
