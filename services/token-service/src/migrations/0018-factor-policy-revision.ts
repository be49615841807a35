import type { Knex, Migration } from '@plant/shared/db';

/**
 * The revision of a realm's factor policy (`require_admin_factor`): the validator behind
 * account-admin's `ETag` / `If-Match` on `/settings/people`
 * (docs/decisions/0045-etag-on-the-policy-and-invitations.md), counted up in the transaction
 * of every change of the policy, under the lock that change takes on the realm's row. Every
 * realm starts at revision 1. Expand-only: the previous release neither reads nor writes it
 * (its updates leave the revision where it was, which a later conditional change still
 * compares correctly against what it read).
 */
export const factorPolicyRevision: Migration = {
  name: '018-factor-policy-revision',
  async up(knex: Knex) {
    await knex.raw(
      'alter table realms add column factor_policy_revision bigint not null default 1',
    );
  },
  async down(knex: Knex) {
    await knex.raw('alter table realms drop column factor_policy_revision');
  },
};
