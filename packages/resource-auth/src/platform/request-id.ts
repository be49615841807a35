/** The request id that crosses services: its header, and where `assignRequestId` (@plant/shared/logging) puts it on a request. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** The id `assignRequestId` put on a request, if it went through a request observer. */
export function requestIdOf(req: unknown): string | undefined {
  const id = (req as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}
