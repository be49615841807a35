import type { Knex, Migration } from '@plant/shared/db';

/**
 * A person's factor generation: moved whenever a second factor is taken away from them (one
 * removed, all reset). A portal session and a realm sign-in in progress remember the
 * generation they started with; one that meets a later generation ends, so a session held
 * when a factor went (perhaps with the lost authenticator) never outlives it. Existing people
 * start at 0, as every session written before the column read it.
 */
export const factorGeneration: Migration = {
  name: '011-factor-generation',
  async up(knex: Knex) {
    await knex.schema.alterTable('users', (t) => {
      t.integer('factor_generation').notNullable().defaultTo(0);
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('users', (t) => {
      t.dropColumn('factor_generation');
    });
  },
};
