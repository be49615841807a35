/**
 * The Plant Store API shapes from the specification (interface version 1.0.0).
 * One zod definition per shape feeds both the TypeScript type and the runtime
 * validation, and the OpenAPI document is generated from the same bounds.
 */
import { isLosslessNumber } from 'lossless-json';
import { z } from 'zod';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** Bounds of the free-text fields (the seed leaves them open; DESIGN.md fixes them). */
export const PLANT_NAME_MAX = 255;
export const PLANT_TAG_MAX = 64;

const INTEGER_LITERAL = /^-?(0|[1-9][0-9]*)$/;
// Unicode Cc (C0, DEL, C1): never meaningful in a name and a classic log/terminal injection vector.
const CONTROL_CHARS = /\p{Cc}/u;

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

/** A string bounded in code points, well-formed UTF-16, with no control characters. */
export function boundedText(field: string, max: number) {
  return z
    .string({ error: `${field} must be a string` })
    .refine((s) => s.length > 0 && s.trim().length > 0, { error: `${field} must not be empty` })
    .refine((s) => [...s].length <= max, { error: `${field} must be at most ${max} characters` })
    .refine((s) => s.isWellFormed(), { error: `${field} must be valid Unicode text` })
    .refine((s) => !CONTROL_CHARS.test(s), { error: `${field} must not contain control characters` });
}

export const Int64Id = z.custom<string>().transform((value, ctx) => {
  const id = parseInt64(value);
  if (id === undefined) {
    ctx.addIssue({ code: 'custom', message: 'id must be an integer between -9223372036854775808 and 9223372036854775807' });
    return z.NEVER;
  }
  return id;
});

/** Request shape for creation: all fields of Plant plus the int64 id (kept as an exact decimal string). */
export const NewPlantSchema = z.object({
  id: Int64Id,
  name: boundedText('name', PLANT_NAME_MAX),
  tag: boundedText('tag', PLANT_TAG_MAX).optional(),
});
export type NewPlant = z.output<typeof NewPlantSchema>;

/** Response shape: name and optional tag; the id is never returned. */
export const PlantSchema = z.object({
  name: z.string(),
  tag: z.string().optional(),
});
export type Plant = z.output<typeof PlantSchema>;

/** The error body of every service: the HTTP status as int32 and a human-readable message. */
export const ErrorSchema = z.object({
  error: z.number().int().min(-2147483648).max(2147483647),
  message: z.string(),
});
export type ErrorBody = z.output<typeof ErrorSchema>;

/** The message of the first issue of a failed zod parse, phrased for an API client. */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request';
  const path = issue.path.map(String).join('.');
  // zod reports the input only with `reportInput`; its message names what it received either way.
  const missing = issue.code === 'invalid_type' && (('input' in issue && issue.input === undefined) || issue.message.endsWith('received undefined'));
  if (missing) return `${path} is required`;
  return issue.message.startsWith(path) || path === '' ? issue.message : `${path}: ${issue.message}`;
}
