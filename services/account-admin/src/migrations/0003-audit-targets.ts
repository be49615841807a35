import type { Migration } from '@plant/shared/db';
import { SCHEMA } from './schema.js';

/**
 * The trail records more than service-account actions (people, invitations, second factors,
 * sessions): `target_type` says what `target_client_id` names (a service account's client id,
 * a person's id, an invitation's id), and the action list moves from a check constraint that
 * every new action had to rewrite to the code's `AUDIT_ACTIONS`, which every insert goes
 * through; the constraint keeps the `<noun>.<verb>` shape.
 */
export const auditTargets: Migration = {
  name: '0003-audit-targets',
  async up(knex) {
    await knex.raw(
      `alter table ??.audit_events
         add column target_type text not null default 'service_account',
         drop constraint audit_events_action,
         add constraint audit_events_action check (action ~ '^[a-z_]+\\.[a-z_]+$'),
         add constraint audit_events_target_type check (target_type in ('service_account', 'user', 'invitation', 'session'))`,
      [SCHEMA],
    );
  },
  async down(knex) {
    await knex.raw(
      `alter table ??.audit_events
         drop constraint audit_events_target_type,
         drop column target_type,
         drop constraint audit_events_action,
         add constraint audit_events_action check (action like 'service_account.%') not valid`,
      [SCHEMA],
    );
  },
};
