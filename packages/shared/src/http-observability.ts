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
}

/**
 * Request id, metrics and the access line in one middleware: one layer, one clock read at
 * each end and one `close` listener per request on the hot path (`requestIdMiddleware` +
 * `httpMetricsMiddleware` + `httpLogger` do the same with three of each).
 * `close` rather than `finish` so a request whose client went away still gets its line
 * ("request aborted"); metrics count finished responses only, as before.
 */
export function httpObservability({ logger, metrics }: HttpObservabilityOptions): RequestHandler {
  const writeAccessLine = createAccessLog(logger);
  const record = metrics ? httpRequestRecorder(metrics) : undefined;
  return function observeRequest(req: Request, res: Response, next: NextFunction): void {
    const id = assignRequestId(req, res);
    const path = pathOf(req.originalUrl ?? req.url);
    const start = process.hrtime.bigint();
    res.once('close', () => {
      const ns = Number(process.hrtime.bigint() - start);
      if (record !== undefined && res.writableFinished) record(req.method, routeOf(req), res.statusCode, ns / 1e9);
      if (isLoggedPath(path)) writeAccessLine(id, req.method, path, res.statusCode, Math.round(ns / 1e6), outcomeOf(res));
    });
    requestContext.run({ requestId: id }, next);
  };
}
