/** The error responses each wing's OpenAPI operations share, as http/openapi.ts words them. */
export interface OperationErrors {
  /** 401 and 503. */
  common: Record<number, string>;
  /** Those and 403 (not an Account Admin user, or CSRF). */
  management: Record<number, string>;
}
