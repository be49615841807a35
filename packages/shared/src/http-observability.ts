import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Registry } from 'prom-client';
import { createAccessLog, isLoggedPath, outcomeOf, pathOf } from './http-logger.js';
import type { Logger } from './logger.js';
import { httpRequestRecorder, routeOf } from './metrics.js';
import { assignRequestId, requestContext } from './request-context.js';

export interface HttpObservabilityOptions {
  logger: Logger;
  /** Where request count and latency go; without it, no HTTP metrics. */
  metrics?: Registry;
  /**
   * Run each request inside the request context (`AsyncLocalStorage`), so any line logged
   * while serving it carries its id (default). A process that never enters the context pays
   * nothing for it: once enabled, the storage is copied into every promise the process creates,
   * requests or not (~4 % of a token grant, whose oidc-provider stack creates many promises).
   */
  requestContext?: boolean;
}

/**
 * Observes one request on a bare `node:http` listener: `route` names its metrics label (read
 * when the response closes, so a router can settle it), `next` runs inside the request context.
 */
export type RequestObserver = <Req extends IncomingMessage>(req: Req, res: ServerResponse, route: (req: Req) => string, next: () => void) => void;

/**
 * Request id, metrics and the access line in one step: one clock read at each end and one
 * `close` listener per request on the hot path. `close` rather than `finish` so a request
 * whose client went away still gets its line ("request aborted"); metrics count finished
 * responses only. Works without express, so a hot route can skip the router entirely.
 */
export function createRequestObserver({ logger, metrics, requestContext: withContext = true }: HttpObservabilityOptions): RequestObserver {
  const writeAccessLine = createAccessLog(logger);
  const record = metrics ? httpRequestRecorder(metrics) : undefined;
  return function observe(req, res, route, next) {
    const id = assignRequestId(req, res);
    const path = pathOf((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/');
    const start = process.hrtime.bigint();
    // `on`, not `once`: a response closes once, and `once` wraps the listener per request.
    res.on('close', () => {
      const ns = Number(process.hrtime.bigint() - start);
      if (record !== undefined && res.writableFinished) record(req.method ?? '', route(req), res.statusCode, ns / 1e9);
      if (isLoggedPath(path)) writeAccessLine(id, req.method ?? '', path, res.statusCode, Math.round(ns / 1e6), outcomeOf(res));
    });
    if (withContext) requestContext.run({ requestId: id }, next);
    else next();
  };
}

/**
 * An observer as express middleware, the route label the template express matched. Pass the
 * observer a service's fast lane uses too, so both lanes share one set of metrics.
 */
export function expressObserver(observe: RequestObserver): RequestHandler {
  return function observeRequest(req: Request, res: Response, next: NextFunction): void {
    observe(req, res, routeOf, next);
  };
}

/** `createRequestObserver` as the first express middleware (`expressObserver`). */
export function httpObservability(options: HttpObservabilityOptions): RequestHandler {
  return expressObserver(createRequestObserver(options));
}
