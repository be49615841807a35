import type { Knex, Migration } from '@plant/shared/db';

/**
 * The revision of a realm's credential policy: the validator behind account-admin's `ETag` /
 * `If-Match` on `/settings/credentials` (docs/decisions/0043-etag-from-revisions.md), counted
 * up in the transaction of every change of the policy, under the realm's lock that change
 * takes. A realm without a row has the defaults at revision 1; its first change writes the row
 * at 2. Expand-only: the previous release neither reads nor writes it (the default serves its
 * inserts, and its updates leave the revision where it was, which a later conditional change
 * still compares correctly against what it read).
 */
export const credentialPolicyRevision: Migration = {
  name: '017-credential-policy-revision',
  async up(knex: Knex) {
    await knex.raw(
      'alter table realm_credential_policies add column revision bigint not null default 1',
    );
  },
  async down(knex: Knex) {
    await knex.raw('alter table realm_credential_policies drop column revision');
  },
};
