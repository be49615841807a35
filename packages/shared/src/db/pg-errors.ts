/**
 * Postgres error codes become meanings in one place (the directus dialect pattern).
 * https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
export const PG_UNIQUE_VIOLATION = '23505';

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (codeOf(err) !== PG_UNIQUE_VIOLATION) return false;
  return constraint === undefined || (err as { constraint?: string }).constraint === constraint;
}

/** True when the database could not be reached or dropped the connection: answer 503, not 500. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = codeOf(err);
  if (code !== undefined && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  const message = (err as Error | null)?.message ?? '';
  return (
    err instanceof Error &&
    (message.includes('Connection terminated') ||
      message.includes('Knex: Timeout acquiring a connection') ||
      message.includes('Client has encountered a connection error') ||
      message.includes('timeout exceeded when trying to connect'))
  );
}
