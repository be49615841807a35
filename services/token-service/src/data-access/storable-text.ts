/**
 * Postgres text cannot hold NUL: a query with one fails (22021) instead of matching nothing.
 * Identifiers from requests (paths, cookies, form fields) go through this before a lookup,
 * so such input simply names nothing that exists.
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000');
}
