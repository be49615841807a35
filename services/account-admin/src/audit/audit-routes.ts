import { fieldsOf, type RouteTable } from '@plant/shared/http';
import { noStore, actorOf } from '../platform/index.js';
import { AuditEventsQuery, parseAuditCursor, parseAuditLimit } from './audit-event-validators.js';
import { listAuditEvents, type AuditTrail } from './list-audit-events.js';

/** `GET <apiBase>/audit-events`: a page of the trail, the next page in `Link: rel="next"`. */
export function auditRoutes(audit: AuditTrail, apiBase: string, portalUrl: string): RouteTable {
  return [
    {
      method: 'GET',
      path: `${apiBase}/audit-events`,
      input: { query: fieldsOf(AuditEventsQuery) },
      handlers: [
        async (req, res) => {
          const limit = parseAuditLimit(req.query);
          const before = parseAuditCursor(req.query.cursor);
          const page = await listAuditEvents(audit, actorOf(req), limit, before);
          if (page.nextCursor !== undefined) {
            const next = `${portalUrl.replace(/\/+$/, '')}${apiBase}/audit-events?limit=${limit}&cursor=${page.nextCursor}`;
            res.setHeader('link', `<${next}>; rel="next"`);
          }
          noStore(res).json(page.events);
        },
      ],
    },
  ];
}
