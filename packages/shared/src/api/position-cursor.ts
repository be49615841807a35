import { INT64_MAX, INT64_MIN } from './api-types.js';
import { BadRequest } from '@plant/resource-auth/platform/errors';

/**
 * An opaque page cursor that carries one int64 key: base64url of `<prefix><decimal>`. Every
 * route that pages by a key decodes its cursor here, so a hand-made cursor is a 400 and never
 * reaches Postgres as an out-of-range bound (22003 there, a 500 here). Only the exact form
 * `encode` produces is accepted: one cursor per position, nothing to craft around.
 */
export interface PositionCursor {
  encode(key: string | bigint): string;
  /** The key, undefined when no cursor was given, or 400 with `message`. */
  decode(raw: unknown): string | undefined;
}

const CURSOR_LITERAL = /^[A-Za-z0-9_-]{1,64}$/;
const INT64_LITERAL = /^-?(0|[1-9][0-9]{0,18})$/;

export function positionCursor(
  prefix: string,
  message: string,
  { min = INT64_MIN }: { min?: bigint } = {},
): PositionCursor {
  const encode = (key: string | bigint) =>
    Buffer.from(`${prefix}${key}`, 'utf8').toString('base64url');
  return {
    encode,
    decode(raw) {
      if (raw === undefined) return undefined;
      if (typeof raw !== 'string' || !CURSOR_LITERAL.test(raw)) throw new BadRequest(message);
      const text = Buffer.from(raw, 'base64url').toString('utf8');
      const literal = text.startsWith(prefix) ? text.slice(prefix.length) : '';
      if (!INT64_LITERAL.test(literal)) throw new BadRequest(message);
      const key = BigInt(literal);
      if (key < min || key > INT64_MAX || encode(key) !== raw) throw new BadRequest(message);
      return key.toString();
    },
  };
}
