import type { Knex, Migration } from '@plant/shared/db';

/**
 * The people trail lists successful sign-ins (`user.sign_in`, people-audit/sign-in-event-repository.ts),
 * kept per person to the newest few and for a bounded time. Two partial indexes let each
 * sign-in find what to prune without reading the trail: a person's sign-ins newest first, and
 * the realm's oldest. Expand-only: the previous release never writes the action, so the
 * indexes stay empty under it.
 */
export const signInEvents: Migration = {
  name: '016-sign-in-events',
  async up(knex: Knex) {
    await knex.raw(
      `create index user_security_events_sign_in_person on user_security_events (realm, target_sub, id desc) where action = 'user.sign_in'`,
    );
    await knex.raw(
      `create index user_security_events_sign_in_age on user_security_events (realm, occurred_at) where action = 'user.sign_in'`,
    );
  },
  async down(knex: Knex) {
    await knex.raw('drop index if exists user_security_events_sign_in_age');
    await knex.raw('drop index if exists user_security_events_sign_in_person');
  },
};
