import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLosslessNumber, parse } from 'lossless-json';
import { BadRequest, PayloadTooLarge, UnsupportedMediaType } from './errors.js';

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
  const [type = '', ...params] = header.toLowerCase().split(';').map((p) => p.trim());
  if (!JSON_TYPE.test(type)) throw new UnsupportedMediaType('Content-Type must be application/json');
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
  return function readJsonBody(req: IncomingMessage & { body?: unknown }, _res: ServerResponse, next: (err?: unknown) => void): void {
    try {
      assertJsonContentType(req);
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
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, size));
      } catch {
        next(new BadRequest('Request body is not valid UTF-8'));
        return;
      }
      if (text.trim() === '') {
        next(new BadRequest('Request body is required'));
        return;
      }
      try {
        req.body = parseJsonLossless(text);
      } catch {
        next(new BadRequest('Request body is not valid JSON'));
        return;
      }
      next();
    });
  };
}
