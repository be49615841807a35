// ---- public surface (generated from what other wings import) ----
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
