import { pino, type Logger, type LoggerOptions } from 'pino';
import { currentRequestId } from './request-context.js';
import { traceLogFields, tracingStarted } from '../tracing/index.js';

export type { Logger } from 'pino';

/**
 * Paths pino censors wherever they appear in a log object. Secrets, passwords and
 * tokens must never reach a log, even when a developer logs a whole body or header set.
 */
export const REDACT_PATHS = [
  'authorization',
  'cookie',
  'client_secret',
  'password',
  'secret',
  'access_token',
  'token',
  '*.authorization',
  '*.cookie',
  '*.client_secret',
  '*.password',
  '*.secret',
  '*.access_token',
  '*.token',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'body.client_secret',
  'body.password',
  'body.secret',
];

export interface CreateLoggerOptions {
  /** The service name, on every line. */
  name: string;
  level?: string;
  /**
   * Where lines go; defaults to stdout, written asynchronously. Tests pass a stream to
   * capture and scan logs.
   */
  destination?: pino.DestinationStream;
}

let lastMs = 0;
let lastTime = '';
/**
 * pino's `isoTime`, formatted once per millisecond: under load many lines share a
 * millisecond, so most lines reuse the string instead of formatting a date.
 */
function isoTimeCachedPerMs(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

function requestFields(): object {
  const reqId = currentRequestId();
  return reqId === undefined ? {} : { reqId };
}

function requestAndTraceFields(): object {
  const fields = traceLogFields();
  return fields === undefined ? requestFields() : { ...requestFields(), ...fields };
}

export function createLogger({ name, level = 'info', destination }: CreateLoggerOptions): Logger {
  const options: LoggerOptions = {
    name,
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: name },
    timestamp: isoTimeCachedPerMs,
    formatters: { level: (label) => ({ level: label }) },
    // With tracing on (started before any logger is made), a line written inside a trace names it.
    mixin: tracingStarted() ? requestAndTraceFields : requestFields,
  };
  return pino(options, destination ?? bufferedStdout());
}

/**
 * stdout, buffered: lines collect until 4 KiB or 100 ms have passed, then go out in one
 * asynchronous write, rather than one system call or thread-pool hop per access line
 * (docs/performance.md has what that cost). pino flushes the buffer synchronously on
 * exit, including after a fatal error; only a SIGKILL can lose the last 100 ms of lines.
 */
function bufferedStdout(): pino.DestinationStream {
  return pino.destination({
    dest: 1,
    sync: false,
    minLength: 4096,
    periodicFlush: 100,
  } as Parameters<typeof pino.destination>[0]);
}
