import { AppError } from '@plant/shared/api';
import { toErrorResponse, type Route } from '@plant/shared/http';
import type { Logger } from '@plant/shared/logging';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { messagePage, type PageViewer } from './pages.js';

/** What a person reads for each status: the page's title, and the message when the error's own may not be shown. */
const ERROR_TEXT: Record<number, { title: string; message: string }> = {
  400: {
    title: 'That link is not valid',
    message: 'The address is not one the portal knows how to read.',
  },
  401: { title: 'Your session has ended', message: 'Sign in again to carry on.' },
  403: {
    title: 'You cannot open this page',
    message: 'Your role does not allow it. Ask an Account Admin of your tenant.',
  },
  404: {
    title: 'Page not found',
    message: 'There is no page at this address. It may have been deleted, or the link is mistyped.',
  },
  405: {
    title: 'That is not possible here',
    message: 'This address does not take that kind of request.',
  },
  429: { title: 'Too many requests', message: 'Wait a moment, then try again.' },
  503: {
    title: 'Temporarily unavailable',
    message: 'A service the portal needs is not answering. Try again in a moment.',
  },
};
const UNEXPECTED = {
  title: 'Something went wrong',
  message: 'Something went wrong on our side. Try again.',
};

/**
 * The error page a browser gets for `status`: the portal's shell (with the navigation when
 * signed in), what happened, and the way back: the Service accounts page, or sign-in.
 */
export function errorPage(
  status: number,
  ownMessage: string | undefined,
  viewer?: PageViewer,
): string {
  const text = ERROR_TEXT[status] ?? UNEXPECTED;
  const link =
    status === 401 || viewer === undefined
      ? { href: '/', text: status === 401 ? 'Sign in again' : 'Back to sign-in' }
      : { href: '/settings/service-accounts', text: 'Back to service accounts' };
  return messagePage(text.title, ownMessage ?? text.message, {
    ...(viewer && status !== 401 ? { session: viewer } : {}),
    link,
  });
}

/** The error's message when its catalogue entry may be shown, else the status's own text. */
function shownMessage(err: unknown, body: { message: string }): string | undefined {
  // The catalogue's flag decides, not the status: a 503 such as "Sessions are temporarily
  // unavailable" is written for people; an unexpected error's message never is.
  if (err instanceof AppError && err.expose) return body.message;
  return undefined;
}

function renderErrorPage(
  logger: Logger,
  err: unknown,
  req: Request,
  res: Response,
  viewer: PageViewer | undefined,
): void {
  const mapped = toErrorResponse(err);
  if (mapped.unexpected) logger.error({ err, path: req.path }, 'unexpected error');
  else if (mapped.status === 503)
    logger.warn({ err: { message: (err as Error)?.message } }, 'dependency unavailable');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(mapped.headers)) res.setHeader(name, value);
  sendErrorPage(
    res,
    mapped.status,
    errorPage(mapped.status, shownMessage(err, mapped.body), viewer),
  );
}

function sendErrorPage(res: Response, status: number, page: string): void {
  res.status(status).setHeader('cache-control', 'no-store').type('html').send(page);
}

/** Errors of page routes are pages, not JSON: a person is reading. Same statuses and headers as the API. */
export function pageErrorHandler(logger: Logger): ErrorRequestHandler {
  return function pageError(err: unknown, req: Request, res: Response, _next: NextFunction): void {
    renderErrorPage(logger, err, req, res, req.portalSession);
  };
}

/**
 * Where machines read, whatever their Accept header says: the API, the static assets (a wrong
 * method there is a script's mistake, not a person's) and the discovery documents.
 */
const MACHINE_PATHS = ['/api/', '/assets/', '/.well-known/'];

/** A browser asking for a page (`Accept: text/html` before JSON), outside the machines' paths: API clients keep the `Error` JSON. */
export function wantsPage(req: Request): boolean {
  return (
    !MACHINE_PATHS.some((prefix) => req.path.startsWith(prefix)) &&
    req.accepts(['json', 'html']) === 'html'
  );
}

/**
 * The last entry of the portal's route table: an unknown path, or any other route's error,
 * becomes an error page for a browser (`wantsPage`) and stays the `Error` JSON for everyone
 * else (the app's own 404 and error responder, after this). `viewerOf` finds who is signed in,
 * for the navigation and the way back; a failure to find out is a signed-out page.
 */
export function browserErrorPages(
  logger: Logger,
  viewerOf: (req: Request) => Promise<PageViewer | undefined>,
): Array<RequestHandler | ErrorRequestHandler> {
  const viewer = (req: Request) =>
    req.portalSession ? Promise.resolve(req.portalSession) : viewerOf(req).catch(() => undefined);
  return [
    async function pageNotFound(req: Request, res: Response, next: NextFunction): Promise<void> {
      if (!wantsPage(req)) return next();
      // Its own words, not the API's "No route for GET …".
      sendErrorPage(res, 404, errorPage(404, undefined, await viewer(req)));
    },
    async function errorForBrowsers(
      err: unknown,
      req: Request,
      res: Response,
      next: NextFunction,
    ): Promise<void> {
      if (!wantsPage(req)) return next(err);
      renderErrorPage(logger, err, req, res, await viewer(req));
    },
  ];
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
