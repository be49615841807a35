import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from '@opentelemetry/api';
import { REQUEST_ID_HEADER, requestIdOf } from '@plant/resource-auth/platform/request-id';

export { REQUEST_ID_HEADER, requestIdOf };

/**
 * What travels with a request through every await: its id, for every log line, and with
 * tracing on the active OpenTelemetry context (`RequestContextManager` keeps it here, so a
 * process has one storage, not two).
 */
export interface RequestContext {
  readonly requestId: string | undefined;
  readonly trace: Context | undefined;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

// Accept a caller's id only if it cannot smuggle anything into logs or headers.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// Ids we make: a random per-process prefix (64 bits) and a counter, unique across replicas
// and restarts for all practical purposes, and far cheaper than a UUID per request.
const ID_PREFIX = randomBytes(8).toString('hex');
let issued = 0;
function newRequestId(): string {
  issued += 1;
  return `${ID_PREFIX}-${issued.toString(36)}`;
}

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/**
 * Adopts a well-formed incoming `x-request-id` (so ids cross services) or makes one; sets
 * `req.id` and the response header.
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  const id =
    typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : newRequestId();
  (req as IncomingMessage & { id: string }).id = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/**
 * `fn` bound to the request context active now (the request's id and, when traced, its span),
 * for a callback an event emitter will call. A body reader's `end` listener runs in the
 * socket's async context, not the request's, so the handlers after it would log without the
 * id and make their queries' spans outside the request's trace. With no context active there
 * is nothing to keep, and `fn` itself is returned.
 */
export function inRequestContext<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const store = requestContext.getStore();
  if (store === undefined) return fn;
  return (...args: A) => requestContext.run(store, fn, ...args);
}
