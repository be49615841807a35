import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What travels with a request through every await: its id, for every log line. */
export interface RequestContext {
  requestId: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

export const REQUEST_ID_HEADER = 'x-request-id';
// Accept a caller's id only if it cannot smuggle anything into logs or headers.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/**
 * Adopts a well-formed incoming `x-request-id` (so ids cross services) or makes one; sets
 * `req.id` and the response header.
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  const id = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  (req as IncomingMessage & { id: string }).id = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}
