import { z } from 'zod';
import { BadRequest } from '@plant/resource-auth/platform/errors';

/**
 * How a query string writes an integer: the plain decimal literal only. `Number()` alone would
 * also take a sign, leading zeros, an exponent or blanks ('+5', '05', '1e2', ' 5'), and
 * `z.coerce` is `Number()`.
 */
const DECIMAL_LITERAL = /^(?:0|[1-9][0-9]*)$/;

/** A page-size query parameter: its schema (for the OpenAPI document) and its parser (for the route). */
export interface PageLimit {
  /** `min 1, max, default`: what the OpenAPI document states. */
  schema: z.ZodDefault<z.ZodInt>;
  /** The value of `query.limit`: the default when absent, else a decimal literal the schema admits, else 400. */
  parse(query: Record<string, unknown>): number;
}

/**
 * The one rule for a `limit` query parameter of a paged list, shared by every such route so
 * the document and the parser cannot drift apart: an integer `1..max` written plainly, `fallback`
 * when absent, given at most once.
 */
export function pageLimit(max: number, fallback: number, description: string): PageLimit {
  const schema = z
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .meta({ format: 'int32', param: { description } });
  const refusal = `limit must be an integer between 1 and ${max}`;
  return {
    schema,
    parse(query) {
      const raw = query.limit;
      if (raw !== undefined && typeof raw !== 'string')
        throw new BadRequest('limit must be given at most once');
      const result = schema.safeParse(
        raw === undefined ? undefined : DECIMAL_LITERAL.test(raw) ? Number(raw) : Number.NaN,
      );
      if (!result.success) throw new BadRequest(refusal);
      return result.data;
    },
  };
}
