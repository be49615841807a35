/**
 * The one way to call the token service's internal API (docs/architecture.md): the bearer
 * `INTERNAL_API_TOKEN`, the current request's id (so one id crosses services), a timeout on
 * every call, and one error type that says whether the API could serve the call.
 */
import { httpCall, type HttpCallAnswer } from './http-call.js';
import { REQUEST_ID_HEADER } from './request-id.js';

export interface InternalApiTarget {
  /** Base URL of the internal API (`TOKEN_SERVICE_INTERNAL_URL`, e.g. `http://127.0.0.1:9082`). */
  baseUrl: string;
  /** `INTERNAL_API_TOKEN`; sent as a bearer token, never logged. */
  internalToken: string;
  /** Aborts every call in flight (e.g. when a resource server stops). */
  signal?: AbortSignal;
  /** The id of the request being served, sent as `x-request-id` (`currentRequestId` of @plant/shared/logging); absent: none. */
  requestId?: () => string | undefined;
}

export interface InternalApiErrorOptions {
  /** The status the internal API answered; absent when no usable answer came. */
  status?: number;
  /** The `message` of the `Error` body the token service sent with it, if any. */
  answerMessage?: string;
  cause?: unknown;
}

/** A failed call to the internal API. Its message names the route or status, never the credentials. */
export class InternalApiError extends Error {
  readonly status: number | undefined;
  readonly answerMessage: string | undefined;

  constructor(message: string, { status, answerMessage, cause }: InternalApiErrorOptions = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'InternalApiError';
    this.status = status;
    this.answerMessage = answerMessage;
  }

  /**
   * The token service could not serve the call: no usable answer (unreachable, timed out,
   * aborted, unreadable or malformed body), a 5xx, or a 401/403 — our internal token refused,
   * a deployment fault rather than the caller's. Any other 4xx is the token service's verdict
   * on the request itself.
   */
  get unavailable(): boolean {
    const { status } = this;
    return status === undefined || status >= 500 || status === 401 || status === 403;
  }
}

export interface InternalApiCall {
  /** Default GET. */
  method?: string;
  path: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Further request headers (a change's `if-match`). */
  headers?: Readonly<Record<string, string>>;
  timeoutMs: number;
  /** Whether the body of an answer with this status is read (as JSON). Other bodies are discarded unread. */
  readsBody(status: number): boolean;
}

export interface InternalApiAnswer {
  status: number;
  /** The parsed JSON body, or undefined when `readsBody` said not to read it. */
  body: unknown;
  /** The length of the body read, in bytes (0 when it was not read). */
  bytes: number;
}

/** Whatever the internal API answered, or an `InternalApiError` without a status when no usable answer came. */
export async function callInternalApi(
  target: InternalApiTarget,
  call: InternalApiCall,
): Promise<InternalApiAnswer> {
  const headers: Record<string, string> = {
    ...call.headers,
    authorization: `Bearer ${target.internalToken}`,
    accept: 'application/json',
  };
  const requestId = target.requestId?.();
  if (requestId !== undefined) headers[REQUEST_ID_HEADER] = requestId;
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  let response: HttpCallAnswer;
  try {
    response = await httpCall(target.baseUrl.replace(/\/+$/, '') + call.path, {
      method: call.method ?? 'GET',
      headers,
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
      timeoutMs: call.timeoutMs,
      ...(target.signal === undefined ? {} : { signal: target.signal }),
    });
  } catch (err) {
    throw new InternalApiError(`internal API unreachable: ${(err as Error).name}`, { cause: err });
  }
  const { status } = response;
  try {
    if (!call.readsBody(status)) {
      response.discard();
      return { status, body: undefined, bytes: 0 };
    }
    const { text, bytes } = await response.text();
    return { status, body: JSON.parse(text), bytes };
  } catch (err) {
    throw new InternalApiError(`internal API body unreadable (${status})`, { cause: err });
  }
}

/** The `message` of an `Error` body, if the body is one. */
export function answerMessageOf(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}
