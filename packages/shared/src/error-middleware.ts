import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { pathOf } from './http-logger.js';
import { sendJson } from './node-route.js';
import { ZodError } from 'zod';
import { describeZodError } from './api-types.js';
import { AppError, MethodNotAllowed, NotFound, STATUS_TEXT } from './errors.js';
import type { Logger } from './logger.js';
import { isDatabaseUnavailable } from './pg-errors.js';
import { requestIdOf } from './request-context.js';

export interface ErrorBodyWithStatus {
  status: number;
  headers: Record<string, string>;
  body: { error: number; message: string };
  /** True for errors nobody expected: logged with their stack. */
  unexpected: boolean;
}

/** Maps anything thrown to the wire `Error` shape. Pure, so every service maps alike. */
export function toErrorResponse(err: unknown): ErrorBodyWithStatus {
  if (err instanceof AppError) {
    const message = err.expose ? err.message : (STATUS_TEXT[err.status] ?? 'Error');
    return {
      status: err.status,
      headers: err.headers,
      body: { error: err.status, message },
      unexpected: err.status >= 500 && !err.expose,
    };
  }
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
  // Errors raised by express/body-parser/http-errors carry a 4xx status and an `expose` flag.
  const status =
    (err as { status?: unknown; statusCode?: unknown })?.status ??
    (err as { statusCode?: unknown })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const message = STATUS_TEXT[status] ?? 'Bad request';
    return { status, headers: {}, body: { error: status, message }, unexpected: false };
  }
  return {
    status: 500,
    headers: {},
    body: { error: 500, message: STATUS_TEXT[500]! },
    unexpected: true,
  };
}

/**
 * Answers `err` in the `Error` shape: never a stack to the client, unexpected errors logged
 * once, a response already under way cut off rather than corrupted. Needs nothing of express.
 */
export function sendError(
  logger: Logger,
  err: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const mapped = toErrorResponse(err);
  const { originalUrl } = req as IncomingMessage & { originalUrl?: string };
  // The id is named here, not left to the request context: a process may run without it.
  const id = requestIdOf(req);
  const reqId = id === undefined ? {} : { reqId: id };
  if (mapped.unexpected)
    logger.error(
      { ...reqId, err, method: req.method, path: pathOf(originalUrl ?? req.url ?? '/') },
      'unexpected error',
    );
  else if (mapped.status === 503)
    logger.warn(
      {
        ...reqId,
        err: { message: (err as Error)?.message, code: (err as { code?: unknown })?.code },
      },
      'dependency unavailable',
    );
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(mapped.headers)) res.setHeader(name, value);
  sendJson(res, mapped.status, mapped.body);
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
