import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino } from 'pino';
import type { Logger } from '../logging/index.js';

/** How a request ended, for its access line. */
export type RequestOutcome = 'completed' | 'failed' | 'aborted';

export type AccessLogWriter = (
  reqId: string,
  method: string,
  path: string,
  status: number,
  ms: number,
  outcome: RequestOutcome,
  /** The request's span when tracing is on (`traceLogFields` as the request began). */
  trace?: { trace_id: string; span_id: string },
  /** Fields a route added with `addAccessLogFields`, already serialized (`"k":v,…`). */
  fields?: string,
) => void;

const accessLogFields = Symbol('plant.accessLogFields');
type AnnotatedRequest = IncomingMessage & { [accessLogFields]?: string };

/**
 * Adds fields to the request's own access line instead of logging a line of its own: one write
 * per request, and a request that adds none pays nothing. The line skips the redaction pass, so
 * only identifiers and counts belong here (a tenant, a subject, actor ids), never a value a
 * caller presented; anything else goes through the redacting logger.
 */
export function addAccessLogFields(req: IncomingMessage, fields: Record<string, unknown>): void {
  const serialized = JSON.stringify(fields).slice(1, -1);
  if (serialized === '') return;
  const annotated = req as AnnotatedRequest;
  annotated[accessLogFields] =
    annotated[accessLogFields] === undefined
      ? serialized
      : `${annotated[accessLogFields]},${serialized}`;
}

/** The fields `addAccessLogFields` gave the request, for the observer that writes its line. */
export function accessLogFieldsOf(req: IncomingMessage): string | undefined {
  return (req as AnnotatedRequest)[accessLogFields];
}

type PinoInternals = Record<symbol, unknown>;

/**
 * Writes the access line of a request straight to the logger's destination, in the logger's
 * own format (level label, time, bindings such as service and name), without a child logger
 * per request and without the redaction pass: every field of this line is fixed (id, method,
 * path, status, duration, and the identifiers a route adds) and none can hold a secret. Every other line keeps going through
 * the redacting logger. The shape is the one pino-http wrote:
 * `{level, time, service, name, reqId, req: {method, path}, res: {status}, responseTime, msg}`,
 * with `trace_id` and `span_id` (hex ids) after `reqId` when the request is traced, and the
 * fields a route added (`addAccessLogFields`) before `msg`.
 */
export function createAccessLog(logger: Logger): AccessLogWriter {
  const internals = logger as unknown as PinoInternals;
  const stream = internals[pino.symbols.streamSym] as { write(line: string): unknown };
  const chindings = (internals[pino.symbols.chindingsSym] as string | undefined) ?? '';
  const time = internals[pino.symbols.timeSym] as () => string;
  const formatters = internals[pino.symbols.formattersSym] as
    | { level?: (label: string, n: number) => object }
    | undefined;
  const levelPrefix = (label: 'info' | 'error') => {
    const n = logger.levels.values[label]!;
    const level = formatters?.level ? formatters.level(label, n) : { level: n };
    return JSON.stringify(level).slice(0, -1);
  };
  const info = levelPrefix('info');
  const error = levelPrefix('error');
  const messages: Record<RequestOutcome, string> = {
    completed: '"msg":"request completed"}\n',
    failed: '"msg":"request failed"}\n',
    aborted: '"msg":"request aborted"}\n',
  };
  return function writeAccessLine(reqId, method, path, status, ms, outcome, trace, fields) {
    const label = outcome === 'failed' ? 'error' : 'info';
    if (!logger.isLevelEnabled(label)) return;
    const traced =
      trace === undefined ? '' : `,"trace_id":"${trace.trace_id}","span_id":"${trace.span_id}"`;
    const added = fields === undefined ? '' : `${fields},`;
    stream.write(
      `${label === 'error' ? error : info}${time()}${chindings},"reqId":${JSON.stringify(reqId)}${traced},"req":{"method":${JSON.stringify(method)},"path":${JSON.stringify(path)}},"res":{"status":${status}},"responseTime":${ms},${added}${messages[outcome]}`,
    );
  };
}

/** 5xx is a failure, a response never finished (client gone) is aborted. */
export function outcomeOf(res: ServerResponse): RequestOutcome {
  if (!res.writableFinished) return 'aborted';
  return res.statusCode >= 500 ? 'failed' : 'completed';
}
