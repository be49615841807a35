/**
 * Postgres text and jsonb cannot hold NUL (U+0000): a query or an insert with one fails (22021,
 * 22P05) instead of matching or storing anything, which would answer a caller's input with a
 * 500. Identifiers from requests (paths, cookies, form fields, client ids) go through
 * `isStorableText` before a lookup, so such input simply names nothing that exists; a JSON body
 * bound for storage is refused whole when `holdsUnstorableText` finds one anywhere in it.
 */

export function isStorableText(value: string): boolean {
  return !value.includes('\u0000');
}

/** True when a string anywhere in `value` (a parsed JSON body: keys, values, nested) holds NUL. */
export function holdsUnstorableText(value: unknown): boolean {
  if (typeof value === 'string') return !isStorableText(value);
  if (Array.isArray(value)) return value.some(holdsUnstorableText);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).some(
      ([key, member]) => !isStorableText(key) || holdsUnstorableText(member),
    );
  return false;
}
