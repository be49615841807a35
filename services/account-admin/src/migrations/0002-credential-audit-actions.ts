import type { Migration } from '@plant/shared/db';
import { SCHEMA } from './schema.js';

/** The actions of keys, trusted workloads, the secret's removal and disabling join the trail. */
export const credentialAuditActions: Migration = {
  name: '0002-credential-audit-actions',
  async up(knex) {
    await knex.raw(
      `alter table ??.audit_events
         drop constraint audit_events_action,
         add constraint audit_events_action check (action in ('service_account.create', 'service_account.update', 'service_account.reset_secret', 'service_account.delete',
           'service_account.key_add', 'service_account.key_remove', 'service_account.trust_add', 'service_account.trust_remove',
           'service_account.secret_remove', 'service_account.disable', 'service_account.enable'))`,
      [SCHEMA],
    );
  },
  async down(knex) {
    await knex.raw(
      `alter table ??.audit_events
         drop constraint audit_events_action,
         add constraint audit_events_action check (action in ('service_account.create', 'service_account.update', 'service_account.reset_secret', 'service_account.delete')) not valid`,
      [SCHEMA],
    );
  },
};
