/** The OpenAPI operation of the audit trail (audit-routes.ts). */
import { errorResponses, jsonPageResponse, type OpenAPIRegistry } from '@plant/shared/http';
import type { OperationErrors } from '../platform/index.js';
import { AuditEventsQuery } from './audit-event-validators.js';
import { AuditEventSchema } from './audit-schemas.js';

export function registerAuditOperations(
  registry: OpenAPIRegistry,
  { common }: Pick<OperationErrors, 'common'>,
): void {
  registry.registerPath({
    method: 'get',
    path: '/audit-events',
    summary: 'The audit trail, newest first; more pages via the Link rel="next" header',
    operationId: 'listAuditEvents',
    request: { query: AuditEventsQuery },
    responses: {
      200: jsonPageResponse(
        'A page of events',
        AuditEventSchema,
        '`<{portal_url}/api/v1/audit-events?limit=N&cursor=...>; rel="next"` when older events exist',
      ),
      ...errorResponses({ 400: 'Invalid limit or cursor', ...common }),
    },
  });
}
