import { AppError } from '@plant/shared/api';
import { toErrorResponse, type Route } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { messagePage } from './pages.js';

/** Errors of page routes are pages, not JSON: a person is reading. Same statuses and headers as the API. */
export function pageErrorHandler(logger: Logger): ErrorRequestHandler {
  return function renderErrorPage(
    err: unknown,
    req: Request,
    res: Response,
    _next: NextFunction,
  ): void {
    const mapped = toErrorResponse(err);
    if (mapped.unexpected) logger.error({ err, path: req.path }, 'unexpected error');
    else if (mapped.status === 503)
      logger.warn({ err: { message: (err as Error)?.message } }, 'dependency unavailable');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const title =
      mapped.status === 503
        ? 'Temporarily unavailable'
        : mapped.status === 400
          ? 'That link is not valid'
          : 'Something went wrong';
    const message =
      mapped.status === 503 || err instanceof AppError
        ? mapped.body.message
        : 'Something went wrong on our side. Try again.';
    for (const [name, value] of Object.entries(mapped.headers)) res.setHeader(name, value);
    const link = req.portalSession
      ? { href: '/settings/service-accounts', text: 'Back to service accounts' }
      : { href: '/', text: 'Back to sign-in' };
    res
      .status(mapped.status)
      .setHeader('cache-control', 'no-store')
      .type('html')
      .send(
        messagePage(title, message, {
          ...(req.portalSession ? { session: req.portalSession } : {}),
          link,
        }),
      );
  };
}

/** Declares the portal's page routes: GET unless said, each with its query's names, its errors as error pages. */
export function pageRoutes(logger: Logger) {
  const onError = pageErrorHandler(logger);
  return (
    path: string,
    handlers: RequestHandler[],
    query?: readonly string[],
    method: 'GET' | 'POST' = 'GET',
  ): Route => ({
    method,
    path,
    handlers,
    onError,
    errors: ['page'],
    ...(query === undefined ? {} : { input: { query } }),
  });
}
