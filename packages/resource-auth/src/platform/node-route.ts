import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString, type ParsedUrlQuery } from 'node:querystring';

/**
 * A handler that needs nothing of express: node's request and response, and `next`. Such a
 * handler works as express middleware and, unchanged, on a hot route (`createHttpApp`), which
 * runs its handlers without express.
 */
export type NodeHandler<Req extends IncomingMessage = IncomingMessage> = (
  req: Req,
  res: ServerResponse,
  next: (err?: unknown) => void,
) => unknown;

/**
 * Runs handlers in order, as express runs a route's: each calls `next()` to go on, or
 * `next(err)` (or throws, or rejects) to end in `onError`. A request that passes the last
 * handler ends in `onError` too, as it does on the express route (`routeEnd`).
 */
export function chainHandlers<Req extends IncomingMessage>(
  handlers: readonly NodeHandler<Req>[],
  onError: (err: unknown, req: Req, res: ServerResponse) => void,
): (req: Req, res: ServerResponse) => void {
  const all = [...handlers, routeEnd];
  return function runRoute(req, res) {
    let index = 0;
    let ended = false;
    const next = (err?: unknown): void => {
      if (ended) return;
      if (err !== undefined) {
        ended = true;
        onError(err, req, res);
        return;
      }
      const handler = all[index++];
      if (handler === undefined) return;
      try {
        const result = handler(req, res, next);
        if (result instanceof Promise)
          result.catch((rejection: unknown) => next(rejection ?? new Error('handler rejected')));
      } catch (thrown) {
        next(thrown ?? new Error('handler threw'));
      }
    };
    next();
  };
}

/**
 * The last handler of every declared route. Handlers that all pass a request on are a bug: an
 * unexpected error (500, logged), whichever way the route was reached.
 */
export const routeEnd: NodeHandler = function routeEnd(req, _res, next) {
  next(new Error(`The handlers of ${req.method} passed the request on without answering`));
};

/** The query string as express's `simple` query parser gives it (`node:querystring`). */
export function queryOf(req: IncomingMessage): ParsedUrlQuery {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return parseQueryString(q === -1 ? '' : url.slice(q + 1));
}

/** What express's `res.json` sends (no ETag: our apps disable it), for either kind of route. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

/** The path of a request URL without its query string (it may carry cursors or, from a careless client, credentials). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
