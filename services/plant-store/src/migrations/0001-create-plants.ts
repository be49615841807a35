import type { Migration } from '@plant/shared/db';
import { SCHEMA } from './schema.js';

/**
 * One row per plant, keyed by (tenant, id): ids are unique per tenant only, and the
 * primary key's index serves the ascending-id keyset pagination of a tenant's plants.
 * The length checks repeat the API's bounds so no other writer can store what the API
 * would refuse to show.
 */
export const createPlants: Migration = {
  name: '0001-create-plants',
  async up(knex) {
    await knex.schema.withSchema(SCHEMA).createTable('plants', (table) => {
      table.text('tenant').notNullable();
      table.bigInteger('id').notNullable();
      table.text('name').notNullable();
      table.text('tag').nullable();
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.primary(['tenant', 'id'], { constraintName: 'plants_pkey' });
    });
    await knex.raw(
      `alter table ??.plants
         add constraint plants_tenant_length check (char_length(tenant) between 1 and 63),
         add constraint plants_name_length check (char_length(name) between 1 and 255),
         add constraint plants_tag_length check (tag is null or char_length(tag) between 1 and 64)`,
      [SCHEMA],
    );
  },
  async down(knex) {
    await knex.schema.withSchema(SCHEMA).dropTableIfExists('plants');
  },
};
