/**
 * The Plant Store API shapes from the specification (interface version 1.0.0).
 * One zod definition per shape feeds the TypeScript type, the runtime validation and,
 * through its `.meta()` (the component name in `id`), the generated OpenAPI document
 * (openapi-document.ts). Where a check is a refinement zod-to-openapi cannot read, the
 * meta states it in JSON Schema terms from the same constants.
 */
import { isLosslessNumber } from 'lossless-json';
import { z } from 'zod';
import { hasInvisibleCharacters, NAME_RULE } from './name-text.js';

import { INT64_MAX, INT64_MIN } from '@plant/resource-auth/platform/int64';

export { INT64_MAX, INT64_MIN };

/** Bounds of the free-text fields (the specification leaves them open; docs/specification.md fixes them). */
export const PLANT_NAME_MAX = 255;
export const PLANT_TAG_MAX = 64;

const INTEGER_LITERAL = /^-?(0|[1-9][0-9]*)$/;
// Unicode Cc (C0, DEL, C1): never meaningful in a name and a classic log/terminal injection vector.
const CONTROL_CHARS = /\p{Cc}/u;
/**
 * `boundedText`'s rules as a JSON Schema pattern: no Cc character, and at least one that is
 * not whitespace (`\s` is the set `trim()` removes). Spelled as ranges, not `\p{Cc}`, because a
 * JSON Schema pattern is not compiled with the `u` flag everywhere.
 */
const NO_CC = '\\u0000-\\u001f\\u007f-\\u009f';
export const TEXT_PATTERN = `^[^${NO_CC}]*[^\\s${NO_CC}][^${NO_CC}]*$`;

/**
 * Parses an int64 id from a JSON value produced by `parseJsonLossless` (a LosslessNumber)
 * or by `JSON.parse` (a safe-integer number). Returns the exact decimal string, or
 * undefined when the value is not an integer JSON number within int64. Strings are
 * never accepted: `"12"` is a string, not an integer.
 */
export function parseInt64(value: unknown): string | undefined {
  let literal: string;
  if (isLosslessNumber(value)) literal = value.value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) literal = String(value);
  else return undefined;
  if (!INTEGER_LITERAL.test(literal)) return undefined;
  const n = BigInt(literal);
  if (n < INT64_MIN || n > INT64_MAX) return undefined;
  return n.toString();
}

/**
 * A string bounded in code points, well-formed UTF-16, with no control characters. The
 * refinements are opaque to zod-to-openapi, so the meta says the same in JSON Schema terms
 * (`maxLength` counts code points too); well-formedness needs no keyword, a JSON Schema
 * string being Unicode text by definition.
 */
export function boundedText(field: string, max: number) {
  return z
    .string({ error: `${field} must be a string` })
    .refine((s) => s.length > 0 && s.trim().length > 0, { error: `${field} must not be empty` })
    .refine((s) => [...s].length <= max, { error: `${field} must be at most ${max} characters` })
    .refine((s) => s.isWellFormed(), { error: `${field} must be valid Unicode text` })
    .refine((s) => !CONTROL_CHARS.test(s), {
      error: `${field} must not contain control characters`,
    })
    .meta({ minLength: 1, maxLength: max, pattern: TEXT_PATTERN });
}

/**
 * `boundedText` for a name or tag a person reads (name-text.ts, "Names a person can trust"):
 * also refuses format characters (bidi controls, zero-width), private-use and unassigned code
 * points and line/paragraph separators. The OpenAPI pattern stays `boundedText`'s (a pattern
 * cannot spell Unicode properties for validators without the `u` flag); the description says
 * the rest.
 */
export function nameText(field: string, max: number) {
  return boundedText(field, max)
    .refine((s) => !hasInvisibleCharacters(s), {
      error: `${field} must not contain invisible or formatting characters (bidi controls, zero-width and the like)`,
    })
    .meta({ description: NAME_RULE });
}

/**
 * Hand-written rather than `z.int()`: ids beyond 2^53 arrive as `LosslessNumber`s and must stay
 * exact, which no zod number schema keeps. The meta documents what `parseInt64` accepts.
 */
export const Int64Id = z
  .custom<string>()
  .transform((value, ctx) => {
    const id = parseInt64(value);
    if (id === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'id must be an integer between -9223372036854775808 and 9223372036854775807',
      });
      return z.NEVER;
    }
    return id;
  })
  .meta({ type: 'integer', format: 'int64' });

/** Request shape for creation: all fields of Plant plus the int64 id (kept as an exact decimal string). */
export const NewPlantSchema = z
  .object({
    id: Int64Id.meta({ description: 'Identification number of the plant' }),
    name: nameText('name', PLANT_NAME_MAX).meta({
      description: `The name of the plant. ${NAME_RULE}`,
    }),
    tag: nameText('tag', PLANT_TAG_MAX)
      .meta({ description: `Tag that specifies the type. ${NAME_RULE}` })
      .optional(),
  })
  .meta({ id: 'NewPlant' });
export type NewPlant = z.output<typeof NewPlantSchema>;

/** Response shape: name and optional tag; the id is never returned. */
export const PlantSchema = z
  .strictObject({
    name: z.string().meta({ description: 'The name of the plant' }),
    tag: z.string().meta({ description: 'Tag that specifies the type' }).optional(),
  })
  .meta({ id: 'Plant' });
export type Plant = z.output<typeof PlantSchema>;

/** The error body of every service: the HTTP status as int32 and a human-readable message. */
export const ErrorSchema = z
  .strictObject({
    error: z
      .number()
      .int()
      .min(-2147483648)
      .max(2147483647)
      .meta({ format: 'int32', description: 'The HTTP status' }),
    message: z.string(),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.output<typeof ErrorSchema>;

/** The message of the first issue of a failed zod parse, phrased for an API client. */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request';
  const path = issue.path.map(String).join('.');
  // zod reports the input only with `reportInput`; its message names what it received either way.
  const missing =
    issue.code === 'invalid_type' &&
    (('input' in issue && issue.input === undefined) ||
      issue.message.endsWith('received undefined'));
  if (missing) return `${path} is required`;
  return issue.message.startsWith(path) || path === ''
    ? issue.message
    : `${path}: ${issue.message}`;
}
