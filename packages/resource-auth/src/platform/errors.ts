/**
 * Typed HTTP errors. Every error a service answers with is an `AppError`; the error
 * middleware turns it into the wire `Error` shape `{error: <status>, message}`.
 * `expose: false` marks errors whose message must not reach the client (the client
 * then sees the generic text for the status).
 */
export interface AppErrorOptions {
  /** Extra response headers, e.g. `WWW-Authenticate` or `Retry-After`. */
  headers?: Record<string, string>;
  /** Whether `message` may be shown to the client. Defaults to true for 4xx. */
  expose?: boolean;
  cause?: unknown;
}

export class AppError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly expose: boolean;

  constructor(status: number, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.headers = options.headers ?? {};
    this.expose = options.expose ?? status < 500;
  }
}

type AppErrorClass = new (message?: string, options?: AppErrorOptions) => AppError;

/** One small class per meaning, named for it (the directus pattern). */
export function createError(name: string, status: number, defaultMessage: string): AppErrorClass {
  const cls = class extends AppError {
    constructor(message: string = defaultMessage, options: AppErrorOptions = {}) {
      super(status, message, options);
    }
  };
  Object.defineProperty(cls, 'name', { value: name });
  Object.defineProperty(cls.prototype, 'name', { value: name });
  return cls;
}

export const BadRequest = createError('BadRequest', 400, 'Bad request');
export const Unauthorized = createError('Unauthorized', 401, 'Authentication required');
export const Forbidden = createError('Forbidden', 403, 'Forbidden');
export const NotFound = createError('NotFound', 404, 'Not found');
export const MethodNotAllowed = createError('MethodNotAllowed', 405, 'Method not allowed');
export const Conflict = createError('Conflict', 409, 'Conflict');
export const PayloadTooLarge = createError(
  'PayloadTooLarge',
  413,
  'Request body is larger than the limit',
);
export const UnsupportedMediaType = createError(
  'UnsupportedMediaType',
  415,
  'Content-Type must be application/json',
);
export const ServiceUnavailable = createError(
  'ServiceUnavailable',
  503,
  'Service temporarily unavailable',
);

/** Generic client-facing text per status, used when an error's message is not exposed. */
export const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication required',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Request body is larger than the limit',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service temporarily unavailable',
  504: 'Gateway timeout',
};
