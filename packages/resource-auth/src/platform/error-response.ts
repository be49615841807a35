/**
 * Anything thrown, answered in the platform's `Error` shape `{error, message}` with the status
 * and headers (challenges, `Retry-After`) its `AppError` carries. The services extend the
 * mapping (validation and database errors, @plant/shared/http); a resource server needs this.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, STATUS_TEXT } from './errors.js';
import type { Logger } from './logger.js';
import { pathOf, sendJson } from './node-route.js';
import { requestIdOf } from './request-id.js';

export interface ErrorBodyWithStatus {
  status: number;
  headers: Record<string, string>;
  body: { error: number; message: string };
  /** True for errors nobody expected: logged with their stack. */
  unexpected: boolean;
}

/** An `AppError` as it is sent; a 4xx of express/body-parser/http-errors as its status; anything else a 500. Pure. */
export function appErrorResponse(err: unknown): ErrorBodyWithStatus {
  if (err instanceof AppError) {
    const message = err.expose ? err.message : (STATUS_TEXT[err.status] ?? 'Error');
    return {
      status: err.status,
      headers: err.headers,
      body: { error: err.status, message },
      unexpected: err.status >= 500 && !err.expose,
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
 * Sends `mapped` (what `err` became): never a stack to the client, unexpected errors logged
 * once, a response already under way cut off rather than corrupted. Needs nothing of express.
 */
export function sendErrorResponse(
  logger: Logger,
  mapped: ErrorBodyWithStatus,
  err: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): void {
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

/** `err` in the `Error` shape (`appErrorResponse`). */
export function sendAppError(
  logger: Logger,
  err: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  sendErrorResponse(logger, appErrorResponse(err), err, req, res);
}
