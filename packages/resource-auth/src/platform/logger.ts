/**
 * What this package logs through: the few methods of a pino logger it calls, so a service's
 * pino logger fits as it is, and a process without pino gets `createJsonLogger`: one JSON line
 * per entry on stdout, pino's fields (`level` as a number, `time`, `name`, `msg`).
 */

export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity } as const;

/** An error's name, message and code, never more: a stack or a cause could carry what must not be logged. */
function plain(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = (value as { code?: unknown }).code;
  return { type: value.name, message: value.message, ...(code === undefined ? {} : { code }) };
}

export interface JsonLoggerOptions {
  name: string;
  /** The least level written (default `warn`). */
  level?: LogLevel;
  /** Where lines go (default stdout). */
  write?: (line: string) => void;
}

/** A logger that writes JSON lines (pino's format) without pino. */
export function createJsonLogger({
  name,
  level = 'warn',
  write = (line) => process.stdout.write(line),
}: JsonLoggerOptions): Logger {
  const least = LEVELS[level];
  const make = (bindings: Record<string, unknown>): Logger => {
    const at =
      (value: number): LogFn =>
      (first: object | string, message?: string) => {
        if (value < least) return;
        const fields =
          typeof first === 'string'
            ? { msg: first }
            : {
                ...Object.fromEntries(Object.entries(first).map(([k, v]) => [k, plain(v)])),
                ...(message === undefined ? {} : { msg: message }),
              };
        write(
          `${JSON.stringify({ level: value, time: Date.now(), name, ...bindings, ...fields })}\n`,
        );
      };
    return {
      debug: at(LEVELS.debug),
      info: at(LEVELS.info),
      warn: at(LEVELS.warn),
      error: at(LEVELS.error),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return make({});
}
