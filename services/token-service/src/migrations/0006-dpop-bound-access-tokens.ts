import type { Knex, Migration } from '@plant/shared/db';

/**
 * A service account may require sender-constrained tokens (RFC 9449): with the flag on, the token
 * endpoint issues it nothing without a DPoP proof, and every token it gets is bound to the
 * proof's key (`cnf.jkt`). Off for every existing account, so their bearer flow is unchanged.
 */
export const dpopBoundAccessTokens: Migration = {
  name: '006-dpop-bound-access-tokens',
  async up(knex: Knex) {
    await knex.schema.alterTable('service_accounts', (t) => {
      t.boolean('dpop_bound_access_tokens').notNullable().defaultTo(false);
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('service_accounts', (t) => {
      t.dropColumn('dpop_bound_access_tokens');
    });
  },
};
