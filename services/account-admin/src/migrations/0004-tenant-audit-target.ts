import type { Migration } from '@plant/shared/db';
import { SCHEMA } from './schema.js';

/**
 * A tenant's own settings join the trail (its credential policy): `target_type` 'tenant', and
 * `target_client_id` holds the tenant's name.
 */
export const tenantAuditTarget: Migration = {
  name: '0004-tenant-audit-target',
  async up(knex) {
    await knex.raw(
      `alter table ??.audit_events
         drop constraint audit_events_target_type,
         add constraint audit_events_target_type check (target_type in ('service_account', 'user', 'invitation', 'session', 'tenant'))`,
      [SCHEMA],
    );
  },
  async down(knex) {
    await knex.raw(
      `alter table ??.audit_events
         drop constraint audit_events_target_type,
         add constraint audit_events_target_type check (target_type in ('service_account', 'user', 'invitation', 'session')) not valid`,
      [SCHEMA],
    );
  },
};
