/** Postgres: the knex database and migrations, Postgres error meanings, prepared statements. */
export * from './db.js';
export * from './pg-errors.js';
export * from './prepared-statements.js';
