import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What travels with a request through every await: its id, for every log line. */
export interface RequestContext {
  requestId: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

export const REQUEST_ID_HEADER = 'x-request-id';
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

/** The id `assignRequestId` put on a request, if it went through a request observer. */
export function requestIdOf(req: unknown): string | undefined {
  const id = (req as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
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
