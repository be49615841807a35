import type { Knex, Migration } from '@plant/shared/db';

/**
 * Pending invitations in pages, and their bound counted cheaply.
 *
 * - `user_invitations.seq`: the order invitations were made in, one int64 per row, so a page
 *   cursor names one position exactly (two invitations can share a `created_at`). Rows made
 *   before this migration are numbered in their `created_at` order.
 * - `user_invitations_pending`: a realm's invitations neither accepted nor revoked, by expiry:
 *   the bound's count, the list and the same-email revocation read only the live ones (expiry
 *   after now), at most the bound's worth, however many expired rows a realm has gathered.
 */
export const invitationPages: Migration = {
  name: '012-invitation-pages',
  async up(knex: Knex) {
    await knex.raw('alter table user_invitations add column seq bigint');
    await knex.raw(`update user_invitations u set seq = o.n
      from (select id, row_number() over (order by created_at, id) as n from user_invitations) o
      where o.id = u.id`);
    await knex.raw('create sequence user_invitations_seq owned by user_invitations.seq');
    await knex.raw(
      "select setval('user_invitations_seq', coalesce((select max(seq) from user_invitations), 0) + 1, false)",
    );
    await knex.raw(`alter table user_invitations
      alter column seq set default nextval('user_invitations_seq'),
      alter column seq set not null`);
    await knex.raw('create unique index user_invitations_seq_key on user_invitations (seq)');
    await knex.raw(`create index user_invitations_pending on user_invitations (realm, expires_at)
      include (seq) where accepted_at is null and revoked_at is null`);
  },
  async down(knex: Knex) {
    await knex.raw('drop index user_invitations_pending');
    await knex.raw('drop index user_invitations_seq_key');
    await knex.raw('alter table user_invitations drop column seq');
  },
};
