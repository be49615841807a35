/**
 * The `audit` wing's public module: other wings import it from here only.
 *
 * The audit trail (its table's migrations are in src/migrations, as in every service): writing
 * events after a change (`recordOrUndo`, `recordIrreversible`, `ManagementDeps`), reading it
 * merged with the realm's events, its API route and OpenAPI operation, and the Activity page's
 * wording.
 *
 * May call: platform, portal.
 */
// What other wings use:
export { activityPage } from './activity-page.js';
export { parseAuditCursor } from './audit-event-validators.js';
export { registerAuditOperations } from './audit-operations.js';
export { createAuditRepository } from './audit-repository.js';
export type { AuditAction, AuditRepository, NewAuditEvent } from './audit-repository.js';
export { auditRoutes } from './audit-routes.js';
export { listAuditEvents } from './list-audit-events.js';
export type { AuditTrail } from './list-audit-events.js';
export { recordIrreversible, recordOrUndo } from './record-audit-event.js';
export type { ManagementDeps } from './record-audit-event.js';
