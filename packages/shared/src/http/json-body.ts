import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLosslessNumber, parse } from 'lossless-json';
import {
  BadRequest,
  PayloadTooLarge,
  UnsupportedMediaType,
} from '@plant/resource-auth/platform/errors';
import { inRequestContext } from '../logging/index.js';

/** Request bodies above this are refused with 413 before they are parsed. */
export const DEFAULT_BODY_LIMIT = 16 * 1024;

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json$/;

/**
 * Parses JSON without losing precision: numbers stay `LosslessNumber`s (so an int64 id is
 * exact), duplicate keys are refused, and `__proto__` stays an ordinary own key.
 */
export function parseJsonLossless(text: string): unknown {
  return parse(text);
}

export { isLosslessNumber };

function assertJsonContentType(req: IncomingMessage): void {
  const header = req.headers['content-type'];
  if (header === undefined) throw new UnsupportedMediaType('Content-Type must be application/json');
  const [type = '', ...params] = header
    .toLowerCase()
    .split(';')
    .map((p) => p.trim());
  if (!JSON_TYPE.test(type))
    throw new UnsupportedMediaType('Content-Type must be application/json');
  for (const param of params) {
    const [key, value] = param.split('=');
    if (key === 'charset' && value !== undefined && value.replace(/"/g, '') !== 'utf-8') {
      throw new UnsupportedMediaType('JSON bodies must be UTF-8');
    }
  }
}

/**
 * A JSON body reader for routes that take one: 415 for another media type, 413 above
 * `limit` bytes (checked on Content-Length and while streaming), 400 for malformed JSON or
 * invalid UTF-8. The parsed value is put on `req.body`.
 */
export function jsonBody({ limit = DEFAULT_BODY_LIMIT }: { limit?: number } = {}) {
  return bodyReader(assertJsonContentType, limit, (text) => {
    try {
      return parseJsonLossless(text);
    } catch {
      throw new BadRequest('Request body is not valid JSON');
    }
  });
}

/**
 * As `jsonBody`, but `req.body` is the body's exact bytes (a Buffer), unparsed: for a route
 * that must check a signature over the body before it reads it (a webhook). Same media type,
 * size and encoding rules.
 */
export function rawJsonBody({ limit = DEFAULT_BODY_LIMIT }: { limit?: number } = {}) {
  return bodyReader(assertJsonContentType, limit, (_text, bytes) => bytes);
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

function assertFormContentType(req: IncomingMessage): void {
  const [type = '', ...params] = (req.headers['content-type'] ?? '')
    .toLowerCase()
    .split(';')
    .map((p) => p.trim());
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (type !== FORM_TYPE || (charset !== undefined && charset !== 'utf-8'))
    throw new UnsupportedMediaType(`Content-Type must be ${FORM_TYPE}`);
}

/**
 * A form body reader (`application/x-www-form-urlencoded`, as OAuth endpoints take): the same
 * limits and errors as `jsonBody`, and a parameter given twice is 400 (RFC 6749 §3.1). `req.body`
 * is an object of strings.
 */
export function formBody({ limit = DEFAULT_BODY_LIMIT }: { limit?: number } = {}) {
  return bodyReader(assertFormContentType, limit, (text) => {
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [name, value] of new URLSearchParams(text)) {
      if (name in fields) throw new BadRequest(`Parameter ${name.slice(0, 64)} is repeated`);
      fields[name] = value;
    }
    return fields;
  });
}

/**
 * A body reader that is not ours (express's `urlencoded`, say) whose `next` continues in the
 * request context, as ours does (`inRequestContext`: its `end` listener runs in the socket's).
 */
export function keepingRequestContext<Req, Res>(
  reader: (req: Req, res: Res, next: (err?: unknown) => void) => void,
): (req: Req, res: Res, next: (err?: unknown) => void) => void {
  return (req, res, next) => reader(req, res, inRequestContext(next));
}

/** Reads a whole body of `assertType`'s media type up to `limit` bytes, then `parse`s it onto `req.body` (a throw is the answer). */
function bodyReader(
  assertType: (req: IncomingMessage) => void,
  limit: number,
  parse: (text: string, bytes: Buffer) => unknown,
) {
  return function readBody(
    req: IncomingMessage & { body?: unknown },
    _res: ServerResponse,
    next: (err?: unknown) => void,
  ): void {
    try {
      assertType(req);
    } catch (err) {
      // Drain what the client sends so the connection stays usable for the error reply.
      req.resume();
      next(err);
      return;
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
      req.resume();
      next(new UnsupportedMediaType('Content-Encoding is not supported'));
      return;
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      next(new PayloadTooLarge(`Request body must be at most ${limit} bytes`));
      return;
    }
    // `data` and `end` arrive in the socket's async context: what follows continues in the request's.
    next = inRequestContext(next);
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        next(new PayloadTooLarge(`Request body must be at most ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => {
      if (failed) return;
      failed = true;
      next(new BadRequest('Request body could not be read'));
    });
    req.on('end', () => {
      if (failed) return;
      let text: string;
      const bytes = Buffer.concat(chunks, size);
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        next(new BadRequest('Request body is not valid UTF-8'));
        return;
      }
      if (text.trim() === '') {
        next(new BadRequest('Request body is required'));
        return;
      }
      try {
        req.body = parse(text, bytes);
      } catch (err) {
        next(err);
        return;
      }
      next();
    });
  };
}
