import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { pathOf } from '@plant/resource-auth/platform/node-route';
import { accessLogFieldsOf, createAccessLog, outcomeOf } from './http-logger.js';
import { endServerSpan, startServerSpan, traceLogFields } from '../tracing/index.js';
import { httpRequestRecorder } from './metrics.js';
import { assignRequestId, type Logger, requestContext } from '../logging/index.js';

export interface HttpObservabilityOptions {
  logger: Logger;
  /** Where request count and latency go; without it, no HTTP metrics. */
  metrics?: Registry;
  /**
   * Run each request inside the request context (`AsyncLocalStorage`), so any line logged
   * while serving it carries its id (default). Off, only a sampled request (tracing on) enters
   * it, for its span to follow its awaits; the others skip the `run` (the token service, whose
   * grants log oidc-provider's own request id).
   */
  requestContext?: boolean;
  /** Paths (without the query) whose answered requests (status below 400) get no access line; failures still do, and metrics are recorded for all. */
  quietPaths?: readonly string[];
}

/**
 * Observes one request: `route` names its metrics label (read when the response closes, so a
 * router can settle it), then `serve(req, res)` runs inside the request context. `serve` takes
 * the request rather than closing over it, so a hot route passes one function for all requests.
 */
export type RequestObserver = <Req extends IncomingMessage>(
  req: Req,
  res: ServerResponse,
  route: (req: Req) => string,
  serve: (req: Req, res: ServerResponse) => void,
) => void;

/**
 * Request id, metrics and the access line in one step: one clock read at each end and one
 * `close` listener per request on the hot path. `close` rather than `finish` so a request
 * whose client went away still gets its line ("request aborted"); metrics count finished
 * responses only. Works without express; `createHttpApp` applies it to every request either
 * way, so use that rather than this.
 */
export function createRequestObserver({
  logger,
  metrics,
  requestContext: withContext = true,
  quietPaths = [],
}: HttpObservabilityOptions): RequestObserver {
  const writeAccessLine = createAccessLog(logger);
  const quiet = new Set(quietPaths);
  const record = metrics ? httpRequestRecorder(metrics) : undefined;
  return function observe(req, res, route, serve) {
    const id = assignRequestId(req, res);
    const path = pathOf((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/');
    const start = process.hrtime.bigint();
    // With tracing on, the request's SERVER span (none for probes and polls); off: undefined, at once.
    const server = quiet.has(path) ? undefined : startServerSpan(req.method ?? '', req.headers);
    // Its ids for the access line, read now: the `close` listener runs outside the span.
    const trace = server === undefined ? undefined : traceLogFields(server.context);
    // `on`, not `once`: a response closes once, and `once` wraps the listener per request.
    res.on('close', () => {
      const ns = Number(process.hrtime.bigint() - start);
      if (record !== undefined && res.writableFinished)
        record(req.method ?? '', route(req), res.statusCode, ns / 1e9);
      if (server !== undefined) endServerSpan(server, route(req), res.statusCode);
      if (res.statusCode >= 400 || !quiet.has(path))
        writeAccessLine(
          id,
          req.method ?? '',
          path,
          res.statusCode,
          Math.round(ns / 1e6),
          outcomeOf(res),
          trace,
          accessLogFieldsOf(req),
        );
    });
    // One store for the request's id and, when sampled, its span. A process without the
    // request context enters it only for a sampled request, whose span must follow its awaits.
    // It stays enabled after: on Node 24 (AsyncContextFrame) an enabled storage costs the
    // promises of requests outside it nothing (docs/performance.md, "Tracing").
    if (withContext || server !== undefined)
      requestContext.run({ requestId: id, trace: server?.context }, serve, req, res);
    else serve(req, res);
  };
}
