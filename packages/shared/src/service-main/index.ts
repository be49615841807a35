/** What every start.ts and migrate.ts do: config errors, migrations, shutdown on a signal. */
export * from './service-main.js';
