import type { Migration } from '@plant/shared/db';
import { createAuditEvents } from './0001-create-audit-events.js';
import { credentialAuditActions } from './0002-credential-audit-actions.js';
import { auditTargets } from './0003-audit-targets.js';
import { tenantAuditTarget } from './0004-tenant-audit-target.js';

export { SCHEMA } from './schema.js';

/** Applied in order by `migrate.ts` and by the jest global setup. */
export const migrations: Migration[] = [
  createAuditEvents,
  credentialAuditActions,
  auditTargets,
  tenantAuditTarget,
];
